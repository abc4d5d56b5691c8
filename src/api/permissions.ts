/** Application types and the permissions each may hold (DESIGN.md section 2). */
export const APPLICATION_TYPES = ['private', 'public', 'management'] as const;
export type ApplicationType = (typeof APPLICATION_TYPES)[number];

const MANAGEMENT = ['application', 'proxy', 'reactor'].flatMap((noun) =>
  ['create', 'read', 'update', 'delete'].map((verb) => `${noun}:${verb}`),
);

export const PERMISSIONS_BY_TYPE: Readonly<Record<ApplicationType, readonly string[]>> = {
  management: MANAGEMENT,
  private: ['token:create', 'token:read', 'token:update', 'token:delete', 'token:use'],
  public: ['token:create', 'token:update'],
};

export const ALL_PERMISSIONS: readonly string[] = [...new Set(Object.values(PERMISSIONS_BY_TYPE).flat())];

/** Types whose Applications may hold access rules (rules are scoped to token containers). */
export const RULE_TYPES: readonly ApplicationType[] = ['private', 'public'];

export const RULE_TRANSFORMS = ['redact', 'mask', 'reveal'] as const;
export type RuleTransform = (typeof RULE_TRANSFORMS)[number];
