/**
 * An SVG string drawn by our own code (src/evaluation/svg.ts), shown as an <img> with a data: URL:
 * an image document runs no script and is allowed by the strict policy docs/offline.md
 * recommends (`img-src 'self' data:`), where inline markup would need more.
 */
export function SvgImage({ svg, alt, testId }: { svg: string; alt: string; testId?: string }) {
  return <img class="svg-image" src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`} alt={alt} data-testid={testId} />;
}
