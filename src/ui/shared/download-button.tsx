/** Saves text made in the page as a file: a Blob URL, clicked and revoked; nothing goes over the network. */
export function DownloadButton({ fileName, text, type, label }: { fileName: string; text: () => string; type: string; label?: string }) {
  const save = () => {
    const url = URL.createObjectURL(new Blob([text()], { type }));
    const a = document.createElement('a');
    a.href = url;
    a.download = fileName;
    document.body.append(a);
    a.click();
    a.remove();
    // The browser reads the Blob after the click returns; free it once it surely has.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  };
  return (
    <button type="button" class="button small" onClick={save} data-testid="download" data-file={fileName}>
      {label ?? `Download ${fileName}`}
    </button>
  );
}
