"""Webhooks: run events pushed to the key's endpoints, signed with Standard Webhooks v1,
retried, durable, and only to public addresses (docs/webhooks.md).

- :mod:`.signing`: secrets and the ``webhook-signature`` header;
- :mod:`.guard`: which addresses a delivery may reach (resolve once, check every address,
  connect to the checked one);
- :mod:`.delivery`: one attempt over HTTP, and the retry schedule;
- :mod:`.events`: what an attempt sends;
- :mod:`.worker`: the per-process worker that claims due deliveries under a lease;
- :mod:`.api`: the endpoints' logic (create, list, change, rotate, test, deliveries,
  resend); :mod:`decido_service.blueprints.webhooks`: the ``/v1/webhooks`` blueprint.

The rows are the store's webhooks concern
(:mod:`decido_service.store.webhook_sql`); a run's deliveries are written in the
transaction of its final state.
"""
