"""The relay-mesh API version this code was generated from."""

API_VERSION = "0.1.0"
