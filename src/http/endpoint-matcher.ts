import { routes } from './routes.ts';

/** Whether a path names one of the endpoints under `basePath` (any method): what the service worker takes. */
export function endpointMatcher(basePath: string | undefined): (pathname: string) => boolean {
  const base = normalizeBasePath(basePath);
  const paths = new Set(routes.map((r) => base + r.path));
  return (pathname) => paths.has(pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname);
}

export function normalizeBasePath(basePath: string | undefined): string {
  if (!basePath || basePath === '/') return '';
  return `/${basePath.replace(/^\/+|\/+$/g, '')}`;
}
