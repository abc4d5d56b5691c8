import type { EmulatorReady } from '../../emulator/index.js';
import { readCredentials } from '../target/credentials-file.js';

/**
 * The bootstrap tenant's keys of a started emulator: those given or made by this start, else those
 * of its credentials file (a restart with a store: the start does not hold them). A credentials
 * file that cannot be read gives none: the caller says which key is unknown and which flag gives it.
 */
export async function bootstrapKeys(
  started: EmulatorReady,
): Promise<{ managementKey: string | undefined; privateKey: string | undefined }> {
  const file = started.credentialsFile;
  const saved = file === undefined ? undefined : await readCredentials(file).catch(() => undefined);
  return {
    managementKey: started.bootstrap.keys.managementKey ?? saved?.management_key,
    privateKey: started.bootstrap.keys.privateKey ?? saved?.private_key,
  };
}
