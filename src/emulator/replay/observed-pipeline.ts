import { type PipelineDeps, type ProxyAnswer, type ProxyCall, ProxyPipeline } from '../proxy/pipeline.js';
import type { CallReplays } from './index.js';

/** The proxy pipeline, each call's stages and answer collected for `svc replay`. */
export class ObservedPipeline extends ProxyPipeline {
  constructor(
    deps: PipelineDeps,
    private readonly replays: CallReplays,
  ) {
    super({ ...deps, observer: replays.capture.proxy });
  }

  override invoke(call: ProxyCall): Promise<ProxyAnswer> {
    return this.replays.invoked(call, (inner) => super.invoke(inner));
  }
}
