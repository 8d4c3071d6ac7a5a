-- A2A push (services/automation): a webhook subscription that follows one A2A task instead of
-- the workspace's events. `a2a_task` is the task and the client's token; `a2a_fold` the
-- task's state as the fan-out has folded it so far (NULL until its first page).
ALTER TABLE webhook_subscriptions ADD COLUMN a2a_task JSONB, ADD COLUMN a2a_fold JSONB;
