/** The page headers live beside the handlers that send them too (`#shared/page-security-headers`). */
export { PAGE_SECURITY_HEADERS } from '#shared/page-security-headers';
