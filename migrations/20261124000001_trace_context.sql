-- The W3C trace context of the request that wrote a row, so the work done later from it (a
-- delivery handed to a harness, an event forwarded to the log) joins that request's trace.
-- Each column belongs to its table's owner.
ALTER TABLE deliveries ADD COLUMN traceparent text;        -- delivery-runner
ALTER TABLE delivery_events ADD COLUMN traceparent text;   -- delivery-runner
ALTER TABLE registry_events ADD COLUMN traceparent text;   -- session-registry
ALTER TABLE permission_events ADD COLUMN traceparent text; -- permission-manager
ALTER TABLE cost_events ADD COLUMN traceparent text;       -- cost-aggregator
