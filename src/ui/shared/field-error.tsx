/** An error shown beside the field it is about; the field points here with aria-describedby. */
export function FieldError({ id, message }: { id: string; message: string | null | undefined }) {
  if (!message) return null;
  return (
    <p class="field-error" id={id} role="alert" data-testid="field-error">
      {message}
    </p>
  );
}
