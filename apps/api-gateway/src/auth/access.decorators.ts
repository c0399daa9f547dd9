import { SetMetadata } from '@nestjs/common';

/**
 * Who may call a route. `project` (the default, no decorator): the admin key, or a key of the project
 * named by the route's `:projectId`. `admin`: the admin key only. `ask-events`: the admin key, a key
 * of the ask's project (checked by the route against the ask's meta), or the ask's events capability
 * token in `?token=`. `public`: anyone (health, metrics).
 */
export type Access = 'public' | 'admin' | 'project' | 'ask-events';

export const ACCESS_METADATA = 'ask:access';

/** Open to anyone: `/health`, `/metrics`. */
export const Public = () => SetMetadata(ACCESS_METADATA, 'public' satisfies Access);
/** Only the admin key (ASK_ADMIN_KEY); a project key gets 401. */
export const AdminOnly = () => SetMetadata(ACCESS_METADATA, 'admin' satisfies Access);
/** The events stream of one ask: a key of its project, the admin key, or its capability token. */
export const AskEventsAccess = () => SetMetadata(ACCESS_METADATA, 'ask-events' satisfies Access);
