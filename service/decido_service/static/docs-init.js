// Starts Swagger UI on this service's own OpenAPI document. Everything the page loads comes
// from this server: the assets are vendored (swagger-ui-dist, see LICENSE and NOTICE) and the
// online spec validator is switched off.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/v1/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: true,
    persistAuthorization: false,
  });
});
