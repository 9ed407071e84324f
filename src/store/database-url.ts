/**
 * What the store accepts as a PostgreSQL database URL, and what of one may be shown. Apart
 * from `postgres-database.ts` so that the command line can name the database in its log
 * without loading `pg`.
 */

/** Whether `url` names a PostgreSQL database (`postgres://` or `postgresql://`). */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(url.trim());
}

/**
 * What may be shown of a database URL: `postgres://host:port/db`, without the user, the
 * password or the query (which may carry options). A socket folder is not shown either.
 */
export function describeDatabaseUrl(url: string): string {
  if (!URL.canParse(url)) return 'postgres://(unreadable URL)';
  const parsed = new URL(url);
  const host =
    parsed.hostname === ''
      ? 'localhost'
      : decodeURIComponent(parsed.hostname).startsWith('/')
        ? '(socket)'
        : parsed.hostname;
  return `postgres://${host}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname}`;
}
