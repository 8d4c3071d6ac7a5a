//! The proto twin must not drift from the JSON contracts: for every contract type, the JSON keys
//! serde reads and writes must be exactly the proto3 JSON names of its message's fields.

use prost::Message as _;
use relay_contracts::capabilities::*;
use relay_contracts::session::*;
use serde::de::{self, Deserialize, Visitor};
use std::collections::{BTreeMap, BTreeSet};

/// A deserializer that only records the field list serde derive asks for (after renames), so
/// no sample values are needed and Option fields count like any other.
struct FieldNames<'a>(&'a mut Option<&'static [&'static str]>);

#[derive(Debug)]
struct Stop(String);

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Stop(msg.to_string())
    }
}

impl<'de> de::Deserializer<'de> for FieldNames<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop("not a plain struct".into()))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        *self.0 = Some(fields);
        Err(Stop("recorded".into()))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

fn json_keys<'de, T: Deserialize<'de>>() -> BTreeSet<String> {
    let mut fields = None;
    let _ = T::deserialize(FieldNames(&mut fields));
    fields
        .expect("a struct with named fields")
        .iter()
        .map(|f| f.to_string())
        .collect()
}

fn proto_messages() -> BTreeMap<String, BTreeSet<String>> {
    let fds = prost_types::FileDescriptorSet::decode(relay_proto::FILE_DESCRIPTOR_SET).unwrap();
    fds.file
        .iter()
        .filter(|f| f.package() == "relay.v1")
        .flat_map(|f| f.message_type.iter())
        .map(|m| {
            (
                m.name().to_string(),
                m.field.iter().map(|f| f.json_name().to_string()).collect(),
            )
        })
        .collect()
}

macro_rules! contracts {
    ($($t:ident),* $(,)?) => {
        vec![$((stringify!($t), json_keys::<$t>())),*]
    };
}

/// Messages with no plain-struct twin: `AgentSelection` keeps unknown JSON keys (serde flatten),
/// which the proto holds in `extra`.
const NOT_COMPARED: &[&str] = &["AgentSelection"];

#[test]
fn every_proto_message_has_the_fields_of_its_json_contract() {
    let pairs = contracts!(
        Session,
        Agent,
        Preview,
        Message,
        Turn,
        AgentSessionCapabilities,
        MessagingCapabilities,
        DeliveryCapabilities,
        EventCapabilities,
        ActionCapabilities,
        LifecycleCapabilities,
        AgUiCapabilities,
        CreateRequest,
        SessionIdResponse,
        SessionRef,
        CloseRequest,
        GetResponse,
        SuccessResponse,
        ListRequest,
        ListResponse,
        UpdateRequest,
        PurgeResponse,
        ForkRequest,
        MergeRequest,
        MergeResponse,
        AbandonRequest,
        ChildSession,
        GetChildrenResponse,
        StatusCountsRequest,
        StatusCounts,
        GetByAdapterSessionIdRequest,
        SearchRequest,
        AttachRequest,
        AttachResponse,
        ReleaseRequest,
        AgentRef,
        CapabilitiesResponse,
        DeclareCapabilitiesRequest,
        DeliveryRequest,
        SendMessageRequest,
        SendMessageResponse,
        TurnsResponse,
        MessagesRequest,
        MessagesResponse,
    );
    let proto = proto_messages();
    let mut problems = Vec::new();
    for (name, json) in &pairs {
        let Some(fields) = proto.get(*name) else {
            problems.push(format!("{name}: no proto message of that name"));
            continue;
        };
        let only_json: Vec<_> = json.difference(fields).collect();
        let only_proto: Vec<_> = fields.difference(json).collect();
        if !only_json.is_empty() || !only_proto.is_empty() {
            problems.push(format!(
                "{name}: only in JSON {only_json:?}, only in proto {only_proto:?}"
            ));
        }
    }
    let compared: BTreeSet<&str> = pairs
        .iter()
        .map(|(n, _)| *n)
        .chain(NOT_COMPARED.iter().copied())
        .collect();
    for name in proto.keys() {
        if !compared.contains(name.as_str()) {
            problems.push(format!(
                "{name}: proto message with no JSON contract compared in this test"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "proto/ and services/contracts disagree:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_field_tracer_sees_renamed_and_optional_fields() {
    let keys = json_keys::<CloseRequest>();
    assert_eq!(keys, ["reason", "sessionId"].iter().map(|s| s.to_string()).collect());
}
