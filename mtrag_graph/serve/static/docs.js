// The API documentation at /docs: Swagger UI, shipped in the package (static/, see VENDORED.md), over /openapi.json.
"use strict";

window.addEventListener("DOMContentLoaded", () => {
  window.SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true });
});
