//! Consensus (seed 003 `consensus.proposed` / `consensus.resolved`): a question with options
//! put to a channel's members or to a list of agents, who vote with `relay_vote`. It resolves
//! when one option reaches the quorum (or every voter has voted), expires at its deadline, or
//! is cancelled by its proposer or an operator.

use crate::messaging::To;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;
use std::collections::BTreeMap;

/// The most options one question offers.
pub const MAX_OPTIONS: usize = 16;
/// The longest option.
pub const MAX_OPTION_CHARS: usize = 200;
/// The most voters one proposal has.
pub const MAX_VOTERS: usize = 100;
/// The longest a proposal stays open (7 days), and the default (1 hour).
pub const MAX_TIMEOUT_MS: u64 = 7 * 24 * 3600 * 1000;
pub const DEFAULT_TIMEOUT_MS: u64 = 3600 * 1000;

/// `consensus.propose`.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProposeRequest {
    /// Proposing again with the same id answers with the stored proposal.
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"))]
    pub proposal_id: Option<String>,
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 4000))]
    pub question: String,
    /// 2 to 16 distinct options, each 1 to 200 characters.
    #[cfg_attr(feature = "openapi", schema(min_items = 2, max_items = 16))]
    pub options: Vec<String>,
    /// `#channel` (its members when proposed, the proposer aside) or a list of `@handle`s.
    pub to: To,
    /// Votes one option needs to win, at most the number of voters; a majority of the voters
    /// by default.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>, minimum = 1, maximum = 100))]
    pub quorum: Option<f64>,
    /// How long voting stays open, in ms (default one hour, at most 7 days).
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 604800000))]
    pub timeout_ms: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum ProposalStatus {
    Open,
    Resolved,
    Expired,
    Cancelled,
}

impl ProposalStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// An agent asked to vote.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Voter {
    pub agent_id: String,
    pub handle: Option<String>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Vote {
    pub agent_id: String,
    pub handle: Option<String>,
    pub choice: String,
    pub reason: Option<String>,
    pub voted_at: i64,
}

/// A proposal, open or decided.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    pub proposal_id: String,
    pub question: String,
    pub options: Vec<String>,
    /// Who proposed it: `@handle`, `key:<id>` or `service:<name>`.
    pub proposer: String,
    /// Where it was put: `#ops` or `@a,@b`.
    pub to: String,
    pub voters: Vec<Voter>,
    pub quorum: i64,
    pub status: ProposalStatus,
    /// The option that reached the quorum.
    pub outcome: Option<String>,
    /// Why it ended as it did.
    pub reason: Option<String>,
    pub votes: Vec<Vote>,
    /// Votes per option, every option listed.
    pub tally: BTreeMap<String, i64>,
    /// The relay message that asked the voters.
    pub message_id: Option<String>,
    pub created_at: i64,
    pub deadline: i64,
    pub resolved_at: Option<i64>,
}

/// `consensus.vote`: the calling agent's one vote.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VoteRequest {
    pub proposal_id: String,
    /// One of the proposal's options.
    pub choice: String,
    pub reason: Option<String>,
}

/// `consensus.get`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProposalRef {
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"))]
    pub proposal_id: String,
}

/// `consensus.cancel`: by its proposer, an operator or a service.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CancelRequest {
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"))]
    pub proposal_id: String,
    pub reason: Option<String>,
}

/// `consensus.list`: newest first.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema, utoipa::IntoParams), into_params(parameter_in = Query))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListProposalsRequest {
    pub status: Option<ProposalStatus>,
    /// 1 to 500 (default 50).
    #[cfg_attr(
        feature = "openapi",
        param(minimum = 1, maximum = 500),
        schema(minimum = 1, maximum = 500)
    )]
    pub limit: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProposalList {
    pub proposals: Vec<Proposal>,
}
