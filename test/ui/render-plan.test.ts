import { describe, expect, test } from 'vitest';
import type { PlanView } from '../../src/api/plan.js';
import { formatApplied, formatOutcome, formatPlan, summaryLine } from '../../src/ui/render-plan.js';

const PLAN: PlanView = {
  changes: [
    {
      address: 'applications.backend',
      action: 'create',
      diffs: [
        { field: 'type', type: 'value', after: 'private' },
        { field: 'permissions', type: 'value', after: ['token:use'] },
      ],
    },
    {
      address: 'reactors.charge',
      action: 'update',
      drift: true,
      diffs: [
        {
          field: 'code',
          type: 'code',
          change: 'changed',
          path: 'reactors/charge.js',
          diff: '@@ -1,1 +1,1 @@\n-old\n+new',
        },
        { field: 'configuration.STRIPE_KEY', type: 'secret', change: 'changed' },
        { field: 'application', type: 'value', before: null, after: 'backend' },
      ],
    },
    {
      address: 'proxies.stripe',
      action: 'rename',
      from: 'old-stripe',
      adopted: true,
      diffs: [{ field: 'response_transform', type: 'code', change: 'removed' }],
    },
    { address: 'reactors.legacy', action: 'delete', diffs: [] },
  ],
  orphans: ['proxies.gone'],
  warnings: ['something to know'],
};

describe('formatPlan', () => {
  test('plain text: a sign and an action per change, field diffs under it, configuration without values', () => {
    expect(formatPlan(PLAN, { color: false })).toBe(
      [
        '  + create applications.backend',
        '      + type: private',
        '      + permissions: [token:use]',
        '  ~ update reactors.charge (changed outside svc since the last apply)',
        '      ~ code (reactors/charge.js)',
        '          @@ -1,1 +1,1 @@',
        '          -old',
        '          +new',
        '      ~ configuration.STRIPE_KEY (changed)',
        '      ~ application: (none) -> backend',
        '  -> rename proxies.stripe (from old-stripe; found on the target by its name; svc manages it from now on)',
        '      - response_transform (removed)',
        '  - delete reactors.legacy',
        '',
        'proxies.gone is no longer in svc.yaml; svc leaves it be (--prune deletes it).',
        'Warning: something to know',
        'Plan: 1 to create, 1 to update, 1 to rename, 1 to delete.',
        '',
      ].join('\n'),
    );
  });

  test('colour only when asked for', () => {
    expect(formatPlan(PLAN, { color: false })).not.toContain('\u001b[');
    expect(formatPlan(PLAN, { color: true })).toContain('\u001b[32m+ create\u001b[39m');
  });

  test('no changes', () => {
    expect(formatPlan({ changes: [], orphans: [], warnings: [] }, { color: false })).toBe(
      'No changes: the target matches the configuration.\n',
    );
    expect(summaryLine([{ action: 'adopt' }])).toBe('Plan: 0 to create, 0 to update, 1 to adopt, 0 to delete.');
  });
});

describe('outcome lines', () => {
  test('applied, failed, skipped, and the last line', () => {
    const outcomes = [
      { address: 'reactors.charge', action: 'update' as const, status: 'applied' as const, ms: 23 },
      {
        address: 'proxies.stripe',
        action: 'create' as const,
        status: 'failed' as const,
        ms: 5,
        error: 'Validation failed (400): name: too long',
      },
      {
        address: 'reactors.x',
        action: 'create' as const,
        status: 'skipped' as const,
        ms: 0,
        error: 'applications.a did not apply',
      },
    ];
    expect(outcomes.map((outcome) => formatOutcome(outcome, { color: false }))).toEqual([
      'reactors.charge updated (23 ms)',
      'proxies.stripe create failed: Validation failed (400): name: too long',
      'reactors.x skipped: applications.a did not apply',
    ]);
    expect(formatOutcome(outcomes[0]!, { color: false, changed: ['code'] })).toBe(
      'reactors.charge code updated (23 ms)',
    );
    expect(formatApplied(outcomes)).toBe('Apply failed: 2 of 3 changes did not apply; the others did.');
    expect(formatApplied([outcomes[0]!])).toBe('Apply complete: 1 updated.');
  });
});

describe('chosen text in a plan is safe for the terminal', () => {
  /** A cleared screen, an OSC 8 hyperlink, a bell, a CR, a line separator and a right-to-left override. */
  const HOSTILE = '\u001b[2J\u001b]8;;https://evil.example\u001b\\x\u0007\r\u2028\u202e';
  // Tabs are kept in lines of code.
  const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u202e]/;

  test('addresses, names, configuration keys and values, paths, code lines, warnings and errors', () => {
    const plan: PlanView = {
      changes: [
        {
          address: `reactors.${HOSTILE}`,
          action: 'rename',
          from: HOSTILE,
          diffs: [
            { field: `configuration.${HOSTILE}`, type: 'secret', change: 'added' },
            { field: 'code', type: 'code', change: 'changed', path: HOSTILE, diff: `@@ -1 +1 @@\n-a\n+${HOSTILE}\tb` },
            { field: 'name', type: 'value', before: HOSTILE, after: [HOSTILE] },
          ],
        },
      ],
      orphans: [`proxies.${HOSTILE}`],
      warnings: [`${HOSTILE}\nsecond line`],
    };
    for (const color of [false, true]) {
      const text = formatPlan(plan, { color, file: HOSTILE }).replace(/\u001b\[\d+m/g, '');
      expect(text).not.toMatch(RAW);
      expect(text).toContain('\\u001b]8;;https://evil.example');
      expect(text).toContain('\\u202e\tb');
      expect(text).not.toMatch(/^second line/m);
    }
    const outcome = { address: HOSTILE, action: 'create' as const, status: 'failed' as const, ms: 1, error: HOSTILE };
    expect(formatOutcome(outcome, { color: false, changed: [HOSTILE] })).not.toMatch(RAW);
  });
});
