-- When the account's current provider identity (OIDC issuer and subject)
-- was linked to it, and when sign-in through the provider last raised its
-- role from the provider's groups (0: never). Both are events of their own
-- for the two-person rule: an approval from an account linked or raised
-- after the run was requested does not count, whenever the account was
-- created. Each is set in the transaction of its audit record.
ALTER TABLE users ADD COLUMN linked_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN raised_ms INTEGER NOT NULL DEFAULT 0;
