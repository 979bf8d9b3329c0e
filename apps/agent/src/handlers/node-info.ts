import { BoardError, type NodeId, type NodeInfoPatch } from '../backend/backend.js';
import type { BoardBackend } from '../backend/backend.js';
import { loadBoardApi } from '../board-api.js';

/**
 * The legacy-only `POST /api/bmc?opt=set&type=node_info`: JSON `{"Node1":{name,module_name,uart_baud},…}`
 * (keys 1-based); only present, non-null fields overwrite. This is how the web UI renames nodes.
 */
export async function setNodeInfoFromLegacyBody(body: Record<string, unknown>, backend: BoardBackend): Promise<void> {
  // The body schema (zod) loads on the first rename: the web UI's rare call, off the hot path.
  const { ZLegacyNodeInfoBodySchema } = await loadBoardApi();
  const parsed = ZLegacyNodeInfoBodySchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    throw new BoardError(400, `the node_info body is not valid: ${where}${issue?.message ?? 'invalid'}`);
  }
  const patch: Partial<Record<NodeId, NodeInfoPatch>> = {};
  for (const node of [1, 2, 3, 4] as const) {
    const entry = parsed.data[`Node${node}`];
    if (!entry) {
      continue;
    }
    const fields: NodeInfoPatch = {};
    if (entry.name != null) {
      fields.name = entry.name;
    }
    if (entry.module_name != null) {
      fields.module_name = entry.module_name;
    }
    if (entry.uart_baud != null) {
      fields.uart_baud = entry.uart_baud;
    }
    patch[node] = fields;
  }
  await backend.setNodeInfo(patch);
}
