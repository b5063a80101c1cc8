/**
 * What the extension reads to know whether the page is wanted or already running, without
 * loading any of the page: everything else in this folder is imported only once it is.
 */

/** Environment variable that makes the host serve the page from the moment it claims the role: `<host>:<port>`. */
export const WEB_ENV = "CHECKPOINT_BRIDGE_WEB";

/** Registry key of the process's web page (process-page.ts); `Symbol.for` makes it the same in every module copy. */
export const WEB_PAGE_KEY = Symbol.for("checkpoint-bridge.web");

/** Whether a page was started in this process (it may have been closed since). */
export const webPageSlotExists = (target: object = globalThis): boolean => WEB_PAGE_KEY in target;
