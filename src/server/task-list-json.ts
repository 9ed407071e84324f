import { ListTasksResponse } from '@a2a-js/sdk';
import { responseJsonFor } from '../a2a/version-fields.js';

/**
 * A ListTasks answer as JSON, in the form the SDK's transports give it (its serializer is not
 * exported): the paging fields always present, and with `includeArtifacts` each task's
 * `artifacts` present, empty or not; each task in the form the call's `version` wants.
 */
export function serializeTaskList(
  response: ListTasksResponse,
  includeArtifacts: boolean,
  version: string,
): Record<string, unknown> {
  const { tasks, nextPageToken, pageSize, totalSize, ...rest } = ListTasksResponse.toJSON(response) as Record<
    string,
    unknown
  > & { tasks?: Array<Record<string, unknown>> };
  const listed = (tasks ?? []).map((task) =>
    includeArtifacts && !('artifacts' in task) ? { ...task, artifacts: [] } : task,
  );
  return {
    tasks: listed.map((json, i) => responseJsonFor(version, json, response.tasks[i]!)),
    nextPageToken: nextPageToken ?? '',
    pageSize: pageSize ?? 0,
    totalSize: totalSize ?? 0,
    ...rest,
  };
}
