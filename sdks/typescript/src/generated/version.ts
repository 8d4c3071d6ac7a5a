// The relay-mesh API version this code was generated from.
export const API_VERSION = "0.1.0";
