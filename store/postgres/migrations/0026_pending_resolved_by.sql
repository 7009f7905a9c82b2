-- The turn that resolved an interaction (resolved_by; '' for none): a
-- press run again after a crash (its update not marked done) finds that
-- it resolved the interaction itself, and carries its turn on instead of
-- taking itself for a second press.
ALTER TABLE pending ADD COLUMN resolved_by text NOT NULL DEFAULT '';
