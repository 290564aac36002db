// At the table: what plain HTML cannot do. Everything works without this file.
(function () {
  "use strict";
  var lastCardInput = null;

  // The card grid fills the card field that last had focus.
  document.addEventListener("focusin", function (event) {
    var input = event.target;
    if (input.matches && input.matches(".card-inputs input")) lastCardInput = input;
  });
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-card-grid] button");
    if (!button || button.disabled) return;
    var inputs = Array.prototype.slice.call(document.querySelectorAll(".card-inputs input"));
    var target = lastCardInput && document.contains(lastCardInput) ? lastCardInput
      : inputs.filter(function (input) { return !input.value; })[0];
    if (!target) return;
    target.value = button.value;
    var next = inputs[inputs.indexOf(target) + 1];
    (next || target).focus();
  });

  // Show JavaScript-only parts (the grid) once this script runs; again after htmx swaps.
  function reveal() {
    document.querySelectorAll("[data-card-grid][hidden]").forEach(function (grid) {
      grid.hidden = false;
    });
  }
  document.addEventListener("DOMContentLoaded", reveal);
  document.addEventListener("htmx:afterSettle", reveal);

  // A form sent successfully clears the notice of a request the server could not store
  // (polls, which are GETs, do not: the notice stays until the player sends again).
  document.addEventListener("htmx:afterRequest", function (event) {
    var notice = document.getElementById("server-notice");
    var config = event.detail.requestConfig;
    if (notice && event.detail.successful && config && config.verb !== "get") {
      notice.replaceChildren();
    }
  });

  // Keep the screen awake during a match, where the browser allows it.
  var wakeLock = null;
  function keepAwake() {
    if (!("wakeLock" in navigator) || wakeLock || !document.querySelector("[data-keep-awake]")) return;
    navigator.wakeLock.request("screen").then(function (lock) {
      wakeLock = lock;
      lock.addEventListener("release", function () { wakeLock = null; });
    }).catch(function () { /* not allowed here (battery saver, no HTTPS): fine */ });
  }
  document.addEventListener("DOMContentLoaded", keepAwake);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") keepAwake();
  });
})();
