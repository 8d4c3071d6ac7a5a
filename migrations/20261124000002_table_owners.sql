-- Every table has exactly one owning service, named here and in the catalogue
-- (`\dt+` shows it): only the owner's crate holds SQL on it. Two exceptions remain and are
-- on the way out: the registry inserts `deliveries`/`delivery_events` in the transaction of
-- their message, and the delivery runner reads `registry_agents`/`registry_messages`.
COMMENT ON TABLE registry_sessions IS 'owner: session-registry';
COMMENT ON TABLE registry_agents IS 'owner: session-registry';
COMMENT ON TABLE registry_turns IS 'owner: session-registry';
COMMENT ON TABLE registry_messages IS 'owner: session-registry';
COMMENT ON TABLE registry_message_targets IS 'owner: session-registry';
COMMENT ON TABLE registry_usage IS 'owner: session-registry';
COMMENT ON TABLE registry_events IS 'owner: session-registry';
COMMENT ON TABLE event_log_head IS 'owner: event-ingest';
COMMENT ON TABLE event_session_heads IS 'owner: event-ingest';
COMMENT ON TABLE events IS 'owner: event-ingest';
COMMENT ON TABLE deliveries IS 'owner: delivery-runner';
COMMENT ON TABLE delivery_agents IS 'owner: delivery-runner';
COMMENT ON TABLE delivery_cursor IS 'owner: delivery-runner';
COMMENT ON TABLE delivery_events IS 'owner: delivery-runner';
COMMENT ON TABLE permission_requests IS 'owner: permission-manager';
COMMENT ON TABLE questions IS 'owner: permission-manager';
COMMENT ON TABLE permission_events IS 'owner: permission-manager';
COMMENT ON TABLE cost_usage IS 'owner: cost-aggregator';
COMMENT ON TABLE cost_totals IS 'owner: cost-aggregator';
COMMENT ON TABLE cost_session_agents IS 'owner: cost-aggregator';
COMMENT ON TABLE cost_context IS 'owner: cost-aggregator';
COMMENT ON TABLE cost_budget_hits IS 'owner: cost-aggregator';
COMMENT ON TABLE cost_cursor IS 'owner: cost-aggregator';
COMMENT ON TABLE cost_events IS 'owner: cost-aggregator';
