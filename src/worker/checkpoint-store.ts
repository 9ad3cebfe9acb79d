// Where the worker keeps its Cloud Map checkpoints (M9, docs/design.md "Warm start"): one ConfigMap per Cloud Map
// namespace (and Region) in the worker's own namespace, the checkpoint as gzip-compressed JSON in its binaryData. The
// decisions are in core/checkpoint.ts; this reads and writes the objects. A ConfigMap that does not decode, or is
// another cluster's, is skipped and logged: its namespace is read in full.
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  decodeCheckpoint,
  encodeCheckpoint,
  CHECKPOINT_VERSION,
  type CheckpointMarker,
  type CheckpointOwner,
  type CheckpointService,
  type NamespaceCheckpoint,
} from '../core/checkpoint.ts';
import { shortHash } from '../core/hashed-names.ts';
import { CONTENT_APPLY_PATCH, type KubeClient } from '../kube/client.ts';
import { CONFIG_MAPS, apiVersionOf, resourcePath } from '../kube/resources.ts';
import type { Logger } from '../observability/log.ts';
import type { CheckpointStore } from '../change-detection/warm-start.ts';

/** Label that marks a ConfigMap as a checkpoint; its value is the checkpoint format version. */
export const LABEL_CHECKPOINT = 'mcs-cloudmap.multicluster.x-k8s.io/cloudmap-checkpoint';
export const CHECKPOINT_KEY = 'checkpoint.json.gz';
const FIELD_MANAGER = 'mcs-cloudmap-worker';
/** ConfigMaps hold at most 1 MiB; a namespace whose checkpoint is larger is not kept (read in full at start). */
const MAX_BYTES = 900 * 1024;

interface ConfigMap {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  binaryData?: Record<string, string>;
}

/** The ConfigMap name of one Cloud Map namespace's checkpoint in one Region. */
export function checkpointName(region: string, namespace: string): string {
  return `mcs-cloudmap-checkpoint-${shortHash([region, namespace], 16)}`;
}

export interface KubeCheckpointStoreOptions {
  client: KubeClient;
  /** The worker's own namespace. */
  namespace: string;
  owner: CheckpointOwner;
  now?: () => number;
  log: Logger;
}

export class KubeCheckpointStore implements CheckpointStore {
  readonly #o: KubeCheckpointStoreOptions;
  /** The last bytes saved per ConfigMap, so an unchanged checkpoint is never written again. */
  readonly #saved = new Map<string, string>();

  constructor(o: KubeCheckpointStoreOptions) {
    this.#o = o;
  }

  async load(): Promise<NamespaceCheckpoint[]> {
    const list = await this.#o.client.request<{ items: ConfigMap[] }>({
      method: 'GET',
      path: resourcePath(CONFIG_MAPS, this.#o.namespace),
      query: { labelSelector: LABEL_CHECKPOINT },
      target: `checkpoint ConfigMaps in ${this.#o.namespace}`,
    });
    const out: NamespaceCheckpoint[] = [];
    for (const cm of list.items) {
      const data = cm.binaryData?.[CHECKPOINT_KEY];
      let decoded: NamespaceCheckpoint | { invalid: string };
      try {
        decoded =
          data === undefined
            ? { invalid: `no ${CHECKPOINT_KEY}` }
            : decodeCheckpoint(gunzipSync(Buffer.from(data, 'base64')).toString('utf8'), this.#o.owner);
      } catch (err) {
        decoded = { invalid: `does not decompress: ${String(err)}` };
      }
      if ('invalid' in decoded) {
        this.#o.log.warn(
          { event: 'checkpoint-ignored', configMap: cm.metadata.name, why: decoded.invalid },
          'Cloud Map checkpoint not usable; its namespace is read in full',
        );
        continue;
      }
      if (cm.metadata.name !== checkpointName(decoded.region, decoded.namespace)) {
        this.#o.log.warn(
          { event: 'checkpoint-ignored', configMap: cm.metadata.name, why: `holds namespace ${decoded.namespace}` },
          'Cloud Map checkpoint not usable; its namespace is read in full',
        );
        continue;
      }
      if (data !== undefined) this.#saved.set(cm.metadata.name, data);
      out.push(decoded);
    }
    return out;
  }

  async save(
    namespace: string,
    markers: readonly CheckpointMarker[],
    services: readonly CheckpointService[],
  ): Promise<void> {
    const { owner } = this.#o;
    const name = checkpointName(owner.region, namespace);
    const sorted = [...services].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const body = (writtenAt: number) =>
      encodeCheckpoint({
        version: CHECKPOINT_VERSION,
        ...owner,
        namespace,
        writtenAt,
        markers: [...markers].sort((a, b) => (a.id < b.id ? -1 : 1)),
        services: sorted,
      });
    // The same content as the last save (whatever its time) is not written again.
    const previous = this.#saved.get(name);
    if (previous !== undefined && sameContent(previous, body(0))) return;
    const data = gzipSync(body((this.#o.now ?? Date.now)())).toString('base64');
    if (data.length > MAX_BYTES) {
      this.#o.log.warn(
        { event: 'checkpoint-too-large', namespace, bytes: data.length },
        'Cloud Map checkpoint of the namespace too large for a ConfigMap; a start reads the namespace in full',
      );
      return;
    }
    await this.#o.client.request({
      method: 'PATCH',
      path: resourcePath(CONFIG_MAPS, this.#o.namespace, name),
      query: { fieldManager: FIELD_MANAGER, force: true },
      contentType: CONTENT_APPLY_PATCH,
      target: `ConfigMap ${this.#o.namespace}/${name}`,
      body: {
        apiVersion: apiVersionOf(CONFIG_MAPS),
        kind: CONFIG_MAPS.kind,
        metadata: {
          name,
          namespace: this.#o.namespace,
          labels: { [LABEL_CHECKPOINT]: String(CHECKPOINT_VERSION) },
          annotations: { [`${LABEL_CHECKPOINT}-namespace`]: namespace },
        },
        binaryData: { [CHECKPOINT_KEY]: data },
      },
    });
    this.#saved.set(name, data);
  }
}

/** Whether a saved checkpoint (gzip, base64) holds what `body` holds, its time aside. */
function sameContent(saved: string, body: string): boolean {
  try {
    const before = JSON.parse(gunzipSync(Buffer.from(saved, 'base64')).toString('utf8')) as Record<string, unknown>;
    return JSON.stringify({ ...before, writtenAt: 0 }) === body;
  } catch {
    return false;
  }
}
