import * as z from 'zod';
import { AGENT_PROVIDERS } from './config.js';
import { lazySchema } from './lazy-schema.js';

/**
 * User-level settings (`relais config`), kept in the OS config folder: what belongs to the person
 * rather than the project. They sit beneath the project's relais.config.json, which always wins.
 * Every field is optional: an empty store is valid.
 */

const ROLES = ['orchestrator', 'builder', 'spec', 'dev', 'qa', 'planner', 'mapper'] as const;

const roleDefault = lazySchema(() =>
  z.strictObject({
    provider: z.enum(AGENT_PROVIDERS).optional(),
    model: z.string().min(1).max(120).optional(),
    fallback_model: z.string().min(1).max(120).nullable().optional(),
  }),
);

export const userSettingsSchema = lazySchema(() =>
  z.strictObject({
    /** The JSON Schema the file follows (schemas/user_settings.schema.json); `relais config set` writes it. */
    $schema: z.string().optional(),
    /** The default provider and model of each role, for projects that do not name their own. */
    agents: z.partialRecord(z.enum(ROLES), roleDefault).optional(),
    notifications: z
      .strictObject({
        /** A terminal bell (on stderr) when a gate asks and when the work of a command ends. */
        enabled: z.boolean().optional(),
      })
      .optional(),
    /** The app's colours: `auto` follows the terminal (none with NO_COLOR), `none` never colours. */
    theme: z.enum(['auto', 'none']).optional(),
  }),
);

export type UserSettings = z.infer<typeof userSettingsSchema>;

/**
 * Every key `relais config` can set, dotted, read off the schema itself (so a new setting is
 * known without a second list): `theme`, `notifications.enabled`, `agents.builder.model`...
 */
export function userSettingKeys(): string[] {
  return leafKeys(userSettingsSchema, '').filter((key) => key !== '$schema');
}

/** Whether `key` names a setting or a group of them (`agents.builder`, `notifications`). */
export function isUserSettingKey(key: string): boolean {
  return userSettingKeys().some((known) => known === key || known.startsWith(`${key}.`));
}

function leafKeys(schema: z.ZodType, prefix: string): string[] {
  const inner = schema instanceof z.ZodOptional || schema instanceof z.ZodNullable ? schema.unwrap() : schema;
  const at = (name: string) => (prefix ? `${prefix}.${name}` : name);
  if (inner instanceof z.ZodObject)
    return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([name, field]) =>
      leafKeys(field, at(name)),
    );
  if (inner instanceof z.ZodRecord && inner.keyType instanceof z.ZodEnum)
    return (inner.keyType.options as string[]).flatMap((name) =>
      leafKeys(inner.valueType as z.ZodType, at(name)),
    );
  return [prefix];
}
