// The console's only script: it keeps the servers table live from the
// server-sent events of /console/events. The rows arrive rendered (and
// escaped) by the server's template.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var body = document.querySelector("[data-live]");
  if (!body || !window.EventSource) return;
  var es = new EventSource(body.getAttribute("data-live"));
  es.addEventListener("servers", function (ev) {
    body.innerHTML = ev.data;
  });
});
