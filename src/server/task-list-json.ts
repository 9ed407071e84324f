import { ListTasksResponse } from '@a2a-js/sdk';

/**
 * A ListTasks answer as JSON, in the form the SDK's transports give it (its serializer is not
 * exported): the paging fields always present, and with `includeArtifacts` each task's
 * `artifacts` present, empty or not.
 */
export function serializeTaskList(response: unknown, includeArtifacts: boolean): Record<string, unknown> {
  const { tasks, nextPageToken, pageSize, totalSize, ...rest } = ListTasksResponse.toJSON(
    response as ListTasksResponse,
  ) as Record<string, unknown> & { tasks?: Array<Record<string, unknown>> };
  const listed = tasks ?? [];
  return {
    tasks: includeArtifacts ? listed.map((task) => ('artifacts' in task ? task : { ...task, artifacts: [] })) : listed,
    nextPageToken: nextPageToken ?? '',
    pageSize: pageSize ?? 0,
    totalSize: totalSize ?? 0,
    ...rest,
  };
}
