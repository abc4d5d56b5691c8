import type { Store } from '../store/store.js';
import { ApplicationService, type Clock } from './applications.js';
import { TenantService } from './tenants.js';

/** Every domain service of the emulator, wired over one store. */
export interface Services {
  applications: ApplicationService;
  tenants: TenantService;
  dispose(): void;
}

export function createServices(store: Store, clock: Clock = () => new Date()): Services {
  const applications = new ApplicationService(store, clock);
  const tenants = new TenantService(store, applications, clock);
  return {
    applications,
    tenants,
    dispose: () => applications.dispose(),
  };
}
