/** The library entry: the emulator, the API client and the wire types. */
export { createEmulator, EmulatorError, type Emulator, type EmulatorOptions, type EmulatorEvent, type Tier } from './emulator/index.js';
export type * from './api/types.js';
export type { Problem } from './api/problem.js';
