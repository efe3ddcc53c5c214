"""The front door: what a person or a program finds at the service's address (GET /)."""
