// Typed errors from the API's JSON envelope: {"error": {code, message, retryable, details}}.
import type { components } from "./generated/schema.js";

export type ErrorCode = components["schemas"]["ErrorCode"];

/**
 * An error reply of the relay-mesh API. `code` is one of the API's closed set (`not_found`,
 * `conflict`, `unauthorized`, `forbidden`, `rate_limited`, `unavailable`, `timeout`, …);
 * `retryable` says whether the same request may succeed later. A reply without the envelope
 * (a proxy's error page, say) gets the code `internal`, retryable when its status is 5xx.
 */
export class RelayError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly retryable: boolean,
    readonly details?: unknown,
    /** Seconds, from a Retry-After header (429, and 503 at the stream cap). */
    readonly retryAfter?: number,
  ) {
    super(`${code}: ${message} (HTTP ${status})`);
    this.name = "RelayError";
  }

  static async fromResponse(response: Response): Promise<RelayError> {
    const header = response.headers.get("retry-after");
    const retryAfter = header && /^\d+$/.test(header) ? Number(header) : undefined;
    const text = await response.text();
    try {
      const { error } = JSON.parse(text) as components["schemas"]["WireError"];
      if (typeof error?.code === "string" && typeof error.message === "string") {
        return new RelayError(response.status, error.code, error.message, !!error.retryable, error.details, retryAfter);
      }
    } catch {
      // not JSON: below
    }
    return new RelayError(response.status, "internal", text.slice(0, 500), response.status >= 500, undefined, retryAfter);
  }
}
