// One metric naming scheme for every process: `mcs_cloudmap_` then the subsystem (`reconcile_`, `cloudmap_`,
// `informer_`, `webhook_`, ...), and the Node.js process metrics under the bare prefix in each process (the scrape
// job tells the processes apart).
export const METRIC_PREFIX = 'mcs_cloudmap_';
