"""Cloud Map emulator for the testbed: moto's servicediscovery backend with the documented behaviour of the real
service added in process (asynchronous operations, uniqueness, idempotency, revisions, filters, paging, request and
resource quotas, a fault switch and a call log), serving several accounts (one access key per account) and Regions,
with namespaces shared between accounts as through AWS RAM. docs/testbed.md describes each behaviour and where it is
documented."""
