-- User names are compared in one canonical form, trimmed and lower case
-- (identity.CanonicalName): rename the rows that are not. Names that would
-- collide ("bob" and "Bob") are refused before this runs (checkUserTwins in
-- users.go): which of the two is the real person is for an admin to decide.
-- Sessions of a renamed account end (its owner signs in again): the
-- foreign key from sessions does not follow a rename.
DELETE FROM sessions WHERE user IN (SELECT name FROM users WHERE name <> lower(trim(name)));
UPDATE users SET name = lower(trim(name)) WHERE name <> lower(trim(name));
