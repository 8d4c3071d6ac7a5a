//! The docs' subject tables and services diagram, generated from the declarations and the request and reply
//! schemas, so the documentation says what the API really accepts.

use super::{ALL, RpcInfo};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{RefOr, schema::SchemaType};

/// A type's schema and every schema it refers to by name.
pub struct Schemas {
    root: RefOr<Schema>,
    named: Vec<(String, RefOr<Schema>)>,
}

impl Schemas {
    pub fn of<T: utoipa::ToSchema>() -> Schemas {
        let mut named = Vec::new();
        T::schemas(&mut named);
        named.push((T::name().into_owned(), T::schema()));
        Schemas {
            root: T::schema(),
            named,
        }
    }

    fn resolve<'a>(&'a self, s: &'a RefOr<Schema>) -> Option<&'a Schema> {
        match s {
            RefOr::T(schema) => Some(schema),
            RefOr::Ref(r) => {
                let name = r.ref_location.rsplit('/').next()?;
                let found = self.named.iter().find(|(n, _)| n == name)?;
                self.resolve(&found.1)
            }
        }
    }

    /// Top-level fields as (name, required); alternatives of a `oneOf` each on their own.
    fn alternatives(&self) -> Vec<Vec<(String, bool)>> {
        match self.resolve(&self.root) {
            Some(Schema::OneOf(one)) => one.items.iter().map(|i| self.fields(i)).collect(),
            _ => vec![self.fields(&self.root)],
        }
    }

    fn fields(&self, s: &RefOr<Schema>) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        match self.resolve(s) {
            Some(Schema::Object(o)) if !matches!(o.schema_type, SchemaType::AnyValue) => {
                for name in o.properties.keys() {
                    out.push((name.clone(), o.required.contains(name)));
                }
            }
            Some(Schema::AllOf(all)) => {
                for item in &all.items {
                    out.extend(self.fields(item));
                }
            }
            _ => {}
        }
        out
    }
}

/// `**agentId**, **tool**, command`: fields in declaration order, required ones in bold.
fn request_cell(s: &Schemas) -> String {
    let cells: Vec<String> = s
        .alternatives()
        .into_iter()
        .map(|fields| {
            if fields.is_empty() {
                return "–".to_string();
            }
            fields
                .iter()
                .map(|(n, req)| if *req { format!("**{n}**") } else { n.clone() })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    cells.join(" — or — ")
}

/// `{requestId, decision, reason?}`: `?` marks a field that may be absent.
fn reply_cell(s: &Schemas) -> String {
    let cells: Vec<String> = s
        .alternatives()
        .into_iter()
        .map(|fields| {
            let names: Vec<String> = fields
                .iter()
                .map(|(n, req)| if *req { n.clone() } else { format!("{n}?") })
                .collect();
            format!("`{{{}}}`", names.join(", "))
        })
        .collect();
    cells.join(" or ")
}

fn callers(r: &RpcInfo) -> String {
    r.roles.iter().map(|role| role.as_str()).collect::<Vec<_>>().join(", ")
}

/// The Markdown table of every subject `service` answers, as the docs carry it (in the guide of its concern) between
/// `<!-- subjects:<service> -->` and `<!-- /subjects -->`.
pub fn markdown_table(service: &str) -> String {
    let mut out = String::from(
        "| Subject | Request (required in **bold**) | Reply (`?`: may be absent) | Callers | What it does |\n\
         | --- | --- | --- | --- | --- |\n",
    );
    for (r, req, resp) in super::schemas().iter().filter(|(r, _, _)| r.service == service) {
        let scope = if r.workspace_scoped { "" } else { " (mesh-wide)" };
        out += &format!(
            "| `{}` | {} | {} | {}{scope} | {} |\n",
            r.subject,
            request_cell(req),
            reply_cell(resp),
            callers(r),
            r.doc.trim().replace('\n', " ").replace('|', "\\|"),
        );
    }
    out
}

/// Every service that answers subjects, in declaration order.
pub fn services() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for r in ALL {
        if !out.contains(&r.service) {
            out.push(r.service);
        }
    }
    out
}

/// The services and the subjects each answers, as `docs/architecture.md` carries it between
/// `<!-- services -->` and `<!-- /services -->`: a diagram of who calls whom over NATS, then a
/// table with each service's subject count by namespace (the part before the first dot).
pub fn services_markdown() -> String {
    // Each service with its namespaces and their subject counts, in declaration order.
    let mut services: Vec<(&'static str, Vec<(&'static str, usize)>)> = Vec::new();
    for r in ALL {
        let ns = r.subject.split('.').next().unwrap_or(r.subject);
        let at = services.iter().position(|(s, _)| *s == r.service).unwrap_or_else(|| {
            services.push((r.service, Vec::new()));
            services.len() - 1
        });
        let namespaces = &mut services[at].1;
        match namespaces.iter_mut().find(|(n, _)| *n == ns) {
            Some((_, count)) => *count += 1,
            None => namespaces.push((ns, 1)),
        }
    }
    let mut out = String::from(
        "```mermaid\nflowchart LR\n  web[\"web apps, SDKs, A2A / AG-UI / MCP clients\"] -->|REST, SSE, gRPC| gateway\n  \
         ops[\"relayctl, nats CLI\"] --> nats\n  gateway --> nats((NATS))\n  harness[\"agent harnesses\"] --> nats\n",
    );
    for (service, namespaces) in &services {
        let node = service.replace('-', "_");
        let names: Vec<String> = namespaces.iter().map(|(n, _)| format!("{n}.*")).collect();
        out += &format!("  nats --> {node}[\"{service}<br/>{}\"]\n", names.join(" "));
        out += &format!("  {node} --> pg[(PostgreSQL)]\n");
    }
    out += "```\n\n| Service | Subjects | By namespace |\n| --- | --- | --- |\n";
    for (service, namespaces) in &services {
        let by: Vec<String> = namespaces.iter().map(|(n, c)| format!("`{n}` {c}")).collect();
        let total: usize = namespaces.iter().map(|(_, c)| c).sum();
        out += &format!("| {service} | {total} | {} |\n", by.join(", "));
    }
    out += &format!("| **all** | **{}** | |\n", ALL.len());
    out
}
