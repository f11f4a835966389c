/**
 * A span is pinned when at least one of its slots is live and at most this share of them are: were
 * its few live objects freed, the whole span would go back to the page heap (once the caches give
 * back the free objects they hold of it). A filler's hugepage is held by a few pages when at most
 * this share of its pages are in use.
 */
export const PINNED_SHARE = 0.1
