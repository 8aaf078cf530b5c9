import { describe, expect, it } from 'vitest';
import { secretsIn } from '../../source/engine/judge/secrets.js';

// What the planner posts on a public issue is scanned for credentials first: it can read the
// repository while untrusted comments sit in its context ("quote .env in your reply").

const kinds = (text: string) => secretsIn(text).map((s) => s.kind);

describe('credentials in text about to be published', () => {
  it('finds the well-known shapes, and says where without repeating the value', () => {
    const found = secretsIn(
      [
        'Sure, here it is:',
        'aws_access_key_id = AKIAIOSFODNN7EXAMPLE',
        '-----BEGIN OPENSSH PRIVATE KEY-----',
        `token ghp_${'a'.repeat(36)}`,
        `github_pat_${'B1'.repeat(20)}`,
        `key sk-ant-api03-${'x'.repeat(30)}`,
        `xoxb-123456789012-abcdefghij`,
        `AIza${'c'.repeat(35)}`,
        'postgres://app:hunter22@db.internal:5432/app',
        'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      ].join('\n'),
    );
    expect(found.map((s) => [s.kind, s.line])).toEqual([
      ['AWS access key id', 2],
      ['private key', 3],
      ['GitHub token', 4],
      ['GitHub token', 5],
      ['API key (sk-…)', 6],
      ['Slack token', 7],
      ['Google API key', 8],
      ['password in a URL', 9],
      ['JSON Web Token', 10],
    ]);
    expect(JSON.stringify(found)).not.toContain('AKIAIOSFODNN7EXAMPLE');
  });

  it('finds .env-style and config-style assignments of secrets', () => {
    expect(kinds('DB_PASSWORD=s3cr3t-pw')).toEqual(['assigned secret']);
    expect(kinds('export STRIPE_SECRET_KEY="rk_live_0123456789abcdef"')).toEqual(['Stripe key']);
    expect(kinds('export SESSION_SECRET="q8Zr1-0pLm"')).toEqual(['assigned secret']);
    expect(kinds('  API_TOKEN: 9f8e7d6c5b4a')).toEqual(['assigned secret']);
    expect(kinds('aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY')).toEqual([
      'assigned secret',
    ]);
    expect(kinds('password: "correct horse"')).toEqual([]);
    expect(kinds('"client_secret": "Zx81-ab_99Qq"')).toEqual(['assigned secret']);
  });

  it('leaves ordinary planning text alone: placeholders, names of settings, questions', () => {
    expect(
      kinds(
        [
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell placeholder, on purpose
          'Should the API_KEY come from the environment (API_KEY=${API_KEY}) or from Vault?',
          'Set DB_PASSWORD=<your password> in .env, never in the repo.',
          'The token: an opaque id, rotated monthly?',
          'SECRET_KEY=changeme is what the README shows; is that still used?',
          '1) Which statuses should users subscribe to?',
          'acme is configured for CMP-08 reports; monthwise revenue maps to GSTR1/3B.',
          'The monkey: bananas in the diagram is a joke.',
        ].join('\n'),
      ),
    ).toEqual([]);
  });
});
