/**
 * Resources as the CLI and `svc apply` build them: request bodies as pure functions of plain input
 * (applications, reactors, proxies, configuration), and the little I/O that feeds them (files, lookups).
 */
export * from './applications.js';
export * from './configuration.js';
export * from './errors.js';
export * from './files.js';
export * from './lookup.js';
export * from './proxies.js';
export * from './reactors.js';
