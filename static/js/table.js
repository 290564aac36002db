// At the table: what plain HTML cannot do. Everything works without this file.
(function () {
  "use strict";
  var lastCardInput = null;

  function cardInputs(scope) {
    return Array.prototype.slice.call((scope || document).querySelectorAll(".card-inputs input"));
  }

  // Shown to the player: not in a closed <details> (whose content keeps its layout box in
  // Chromium, so offsetParent alone does not tell) and not hidden.
  function shown(input) {
    return input.checkVisibility ? input.checkVisibility() : input.offsetParent !== null;
  }

  // Enter in a card field moves to the next one of its group; the last one sends the form.
  // A player's own field is a group of one: Enter (the keyboard's Go) sends their card.
  document.addEventListener("keydown", function (event) {
    var input = event.target;
    if (event.key !== "Enter" || !input.matches || !input.matches(".card-inputs input")) return;
    var inputs = cardInputs(input.closest(".card-inputs")).filter(shown);
    var next = inputs[inputs.indexOf(input) + 1];
    if (!next) return; // the last field: Enter sends the form as usual
    event.preventDefault();
    next.focus();
  });

  // The card grid fills the seats in order: the focused field if it is empty, else the
  // first empty one; then the focus moves on to the next empty field.
  document.addEventListener("focusin", function (event) {
    var input = event.target;
    if (input.matches && input.matches(".card-inputs input")) lastCardInput = input;
  });
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-card-grid] button");
    if (!button || button.disabled) return;
    var inputs = cardInputs().filter(shown);
    var empty = inputs.filter(function (input) { return !input.value; });
    var focused = lastCardInput && document.contains(lastCardInput) ? lastCardInput : null;
    var target = focused && !focused.value ? focused : empty[0] || focused;
    if (!target) return;
    target.value = button.value;
    var next = inputs.slice(inputs.indexOf(target) + 1).concat(inputs)
      .filter(function (input) { return !input.value; })[0];
    (next || target).focus();
  });

  // A field that holds a wrong card as the page brought it is selected as it gets the
  // focus or a tap (after the tap's own caret): the right card typed over it replaces it
  // (a "3" typed again does not make "33").
  function selectWrong(input) {
    if (input && input.matches && input.matches(".card-inputs input[aria-invalid=true]") &&
        input.value && input.value === input.defaultValue) {
      input.select();
    }
  }
  document.addEventListener("focusin", function (event) { selectWrong(event.target); });
  document.addEventListener("click", function (event) { selectWrong(event.target); });
  // The tap that focused it would put the caret down on release: keep the selection.
  document.addEventListener("mouseup", function (event) {
    var input = event.target;
    if (input === document.activeElement && input.selectionStart === 0 && input.value &&
        input.selectionEnd === input.value.length && input.matches(".card-inputs input[aria-invalid=true]")) {
      event.preventDefault();
    }
  });
  document.addEventListener("DOMContentLoaded", function () { selectWrong(document.activeElement); });
  document.addEventListener("htmx:afterSettle", function () { selectWrong(document.activeElement); });

  // "Your card: 3 · Change": one tap opens the field with the card, selected; Enter sends.
  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (details.tagName !== "DETAILS" || !details.open || !details.classList.contains("my-card")) return;
    var input = details.querySelector("input");
    if (!input) return;
    input.focus();
    input.select();
  }, true);

  // Show JavaScript-only parts (the grid) once this script runs; again after htmx swaps.
  function reveal() {
    document.querySelectorAll("[data-card-grid][hidden]").forEach(function (grid) {
      grid.hidden = false;
    });
  }
  document.addEventListener("DOMContentLoaded", reveal);
  document.addEventListener("htmx:afterSettle", reveal);

  // A card that came in from another phone: its field on this phone's form goes (and is
  // no longer sent), while what was typed in the other fields stays.
  function dropEntered() {
    document.querySelectorAll(".entered .is-in[data-player]").forEach(function (tag) {
      var input = document.querySelector(
        ".round-form input[name='card-" + tag.getAttribute("data-player") + "']");
      var field = input && input.closest(".field");
      if (!field || field.hidden) return;
      field.hidden = true;
      input.disabled = true;
    });
  }
  document.addEventListener("DOMContentLoaded", dropEntered);
  document.addEventListener("htmx:afterSettle", dropEntered);

  // The grid opens below the card fields: bring its cards into view once they are there.
  document.addEventListener("htmx:afterSettle", function (event) {
    var grid = event.target.closest && event.target.closest("[data-card-grid]");
    if (grid && grid.open) grid.scrollIntoView({ block: "nearest" });
  });

  // A newly placed round is dealt out card by card, lowest first (app.css), when it
  // arrives by htmx (a page load shows it at once; reduced motion shows it at once).
  var shownRound = null;
  function remember() {
    var table = document.getElementById("live-table");
    shownRound = table ? table.getAttribute("data-round") : null;
  }
  document.addEventListener("DOMContentLoaded", remember);
  document.addEventListener("htmx:afterSettle", function () {
    var table = document.getElementById("live-table");
    if (!table) return;
    var round = table.getAttribute("data-round");
    if (shownRound !== null && round !== shownRound) table.classList.add("is-dealing");
    shownRound = round;
  });

  // Lost the server (wifi, a restart): say so, keep the page (and what was typed) as it
  // is; polling goes on by itself and the notice goes once an answer comes back.
  function offline(lost) {
    var notice = document.getElementById("offline");
    if (notice) notice.hidden = !lost;
  }
  document.addEventListener("htmx:sendError", function () { offline(true); });
  document.addEventListener("htmx:afterRequest", function (event) {
    var xhr = event.detail && event.detail.xhr;
    if (xhr && xhr.status > 0 && xhr.status < 500) offline(false);
  });

  // The match's event stream (matches/_stream.html) brings every change while it is
  // open: the poller holds back meanwhile, and asks again the moment the stream drops
  // (a server restart, a proxy that buffers, a blocked URL). EventSource reconnects by
  // itself and says what this page last got, so nothing is missed.
  // #stream's data-stream says how it is: open, reconnecting, or failed (never opened).
  var streamOpen = false;
  var streamWasOpen = false;
  function streamIs(state) {
    var stream = document.getElementById("stream");
    if (stream) stream.setAttribute("data-stream", state);
  }
  function streamOpened() {
    streamOpen = streamWasOpen = true;
    streamIs("open");
    offline(false);
  }
  document.addEventListener("htmx:sseOpen", streamOpened);
  document.addEventListener("htmx:sseError", function () {
    streamOpen = false;
    streamIs(streamWasOpen ? "reconnecting" : "failed");
    if (streamWasOpen) offline(true);
  });
  // A stream that brings an event is open, whether or not its open event came: WebKit was
  // seen with its EventSource open (readyState 1) and no open event 30 s on. Its first
  // event (a change, or "alive" within 15 s) then does what the open event does.
  document.addEventListener("htmx:sseMessage", function () {
    if (streamOpen) return offline(false);
    streamOpened();
    sendTheOutbox();
  });

  // A stream can stay open and go silent (a sleeping access point, a half-dead NAT):
  // EventSource then never errs. The server sends an event at least every 15 s; after
  // 40 s of nothing (the stream's data-silent-ms; checked every 2 s), say so, poll, and
  // open a new stream from what the page shows now (the poller's address holds the
  // versions and form key of the last change).
  function silentMs() {
    var stream = document.getElementById("stream");
    return Number(stream && stream.getAttribute("data-silent-ms")) || 40000;
  }
  var lastHeard = 0;
  function heard() { lastHeard = Date.now(); }
  document.addEventListener("htmx:sseOpen", heard);
  document.addEventListener("htmx:sseMessage", heard);
  function reopenStream() {
    var stream = document.getElementById("stream");
    var poller = document.getElementById("poll");
    if (!stream || !window.htmx) return;
    var fresh = stream.cloneNode(false);
    var current = poller && poller.getAttribute("hx-get");
    if (current) fresh.setAttribute("sse-connect", current.replace("/live?", "/events?"));
    htmx.swap(stream, fresh.outerHTML, { swapStyle: "outerHTML" }); // closes the old one
  }
  setInterval(function () {
    if (!streamOpen || Date.now() - lastHeard < silentMs()) return;
    streamOpen = false;
    streamIs("reconnecting");
    offline(true);
    reopenStream(); // the poller asks meanwhile, as after any drop
  }, 2000);
  document.addEventListener("htmx:confirm", function (event) {
    if (streamOpen && event.target.id === "poll") event.preventDefault();
  });

  // An entry form pushed with the key of the one shown is the same form: keep the one
  // shown, and what is being typed in it (a phone's own entry brought it already).
  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    var target = event.detail.target;
    var incoming = event.detail.fragment && event.detail.fragment.firstElementChild;
    if (!target || target.id !== "entry" || !incoming) return;
    var key = target.getAttribute("data-form-key");
    if (key && key === incoming.getAttribute("data-form-key")) {
      event.detail.shouldSwap = false;
      return;
    }
    // Its field that waits for the focus takes it without scrolling: the page stays on
    // the round just placed, as on the phone that placed it. htmx would scroll to it, and
    // at a game's end the next game's starting cards are a screen below who took what.
    var waiting = incoming.querySelector("[autofocus]");
    if (!waiting) return;
    waiting.removeAttribute("autofocus");
    focusUnscrolled = waiting.id;
  });
  var focusUnscrolled = null;
  document.addEventListener("htmx:afterSettle", function () {
    var field = focusUnscrolled && document.getElementById(focusUnscrolled);
    focusUnscrolled = null;
    if (field) field.focus({ preventScroll: true });
  });

  // The field a player scrolled down to and types in stays where it is on the screen when
  // a push changes what is above it (a game's luck and review arrive from the background
  // while the next game's starting cards are typed). A page at its top stays at its top:
  // there the round just placed is what the phone shows.
  var typing = null;
  function noteTyping(event) {
    var field = document.activeElement;
    var target = event.detail.target;
    if (typing || !field || !field.closest || !field.closest("#entry") || window.scrollY <= 0) return;
    if (target && target.contains(field)) return; // the field itself is swapped: htmx keeps its focus
    var box = field.getBoundingClientRect();
    if (box.top < 0 || box.bottom > window.innerHeight) return;
    typing = { field: field, top: box.top };
  }
  function keepTyping() {
    var was = typing;
    typing = null;
    if (!was || !was.field.isConnected) return;
    var moved = was.field.getBoundingClientRect().top - was.top;
    if (moved) window.scrollBy(0, moved);
  }
  document.addEventListener("htmx:oobBeforeSwap", noteTyping);
  document.addEventListener("htmx:beforeSwap", noteTyping);
  document.addEventListener("htmx:oobAfterSwap", keepTyping);
  document.addEventListener("htmx:afterSwap", keepTyping);
  document.addEventListener("htmx:afterSettle", keepTyping);

  // A <details> with an id that the player opened (a game's review, opened to wait for
  // it) stays open when a push brings its section again, and one they closed stays shut.
  var opened = {};
  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (details.tagName === "DETAILS" && details.id) opened[details.id] = details.open;
  }, true);
  function keepOpened() {
    Object.keys(opened).forEach(function (id) {
      var details = document.getElementById(id);
      if (details && details.tagName === "DETAILS" && details.open !== opened[id]) details.open = opened[id];
    });
  }
  document.addEventListener("htmx:afterSettle", keepOpened);
  document.addEventListener("htmx:sseMessage", keepOpened);

  // A form sent successfully clears the notice of a request the server could not store
  // (polls, which are GETs, do not: the notice stays until the player sends again).
  document.addEventListener("htmx:afterRequest", function (event) {
    var notice = document.getElementById("server-notice");
    var config = event.detail.requestConfig;
    if (notice && event.detail.successful && config && config.verb !== "get") {
      notice.replaceChildren();
    }
  });

  // Your turn: a row choice for the player this phone is ("I am Anna") arrives with a
  // short vibration, where the browser allows it and the page is in view; once a choice.
  var buzzed = null;
  function yourTurn() {
    var entry = document.getElementById("entry");
    var choice = document.querySelector(".row-choice-live[data-chooser]");
    var mine = entry && choice && entry.getAttribute("data-me") === choice.getAttribute("data-chooser");
    if (!mine) return;
    var key = choice.getAttribute("data-choice-key");
    if (key === buzzed) return;
    buzzed = key;
    if (document.visibilityState === "visible" && navigator.vibrate) navigator.vibrate(200);
  }
  document.addEventListener("htmx:afterSettle", yourTurn);
  document.addEventListener("htmx:sseMessage", yourTurn);

  // What was typed survives a reload (a phone's browser restarts, a thumb pulls the page
  // down): kept in sessionStorage under the form's data-keep-typed key (match, game,
  // round; a correction's also its version), put back into the fields as the page
  // brought them, and
  // thrown away once the form was sent and taken, or once the match moved on (the key of
  // the form shown is another). sessionStorage stays with the tab, over http too.
  var TYPED = "companion-typed:";
  function typedFields(form) {
    return Array.prototype.slice.call(form.querySelectorAll("input:not([type=hidden]):not([type=radio]):not([type=checkbox]), textarea"));
  }
  function keep(form) {
    var typed = {};
    typedFields(form).forEach(function (field) { if (field.name && field.value) typed[field.name] = field.value; });
    try {
      if (Object.keys(typed).length) sessionStorage.setItem(TYPED + form.dataset.keepTyped, JSON.stringify(typed));
      else sessionStorage.removeItem(TYPED + form.dataset.keepTyped);
    } catch (error) { /* storage full or off: typing works as before */ }
  }
  function putBack() {
    var shown = {};
    document.querySelectorAll("form[data-keep-typed]").forEach(function (form) {
      var key = TYPED + form.dataset.keepTyped;
      shown[key] = true;
      var typed = null;
      try { typed = JSON.parse(sessionStorage.getItem(key) || "null"); } catch (error) { typed = null; }
      // A form the server sent back refused holds what was sent: kept for a reload.
      if (!typed && form.querySelector("[aria-invalid=true]")) keep(form);
      if (!typed) return;
      typedFields(form).forEach(function (field) {
        // Not over what was typed since: only a field as the page brought it (empty, or
        // the round as stored, in a correction).
        if (typed[field.name] && field.value === field.defaultValue) field.value = typed[field.name];
      });
    });
    // A form of the same kind and match with another key: the match moved on.
    var kinds = Object.keys(shown).map(function (key) { return key.split(":game-")[0] + ":game-"; });
    try {
      for (var index = sessionStorage.length - 1; index >= 0; index--) {
        var stored = sessionStorage.key(index);
        if (stored && !shown[stored] && kinds.some(function (kind) { return stored.indexOf(kind) === 0; })) {
          sessionStorage.removeItem(stored);
        }
      }
    } catch (error) { /* nothing kept */ }
  }
  document.addEventListener("input", function (event) {
    var form = event.target.closest && event.target.closest("form[data-keep-typed]");
    if (form) keep(form);
  });
  // Sent: the typing is the server's now (a push may replace the form before the answer
  // comes, and a form no longer on the page hears no answer). Kept again only when it
  // could not go (the outbox keeps it); a refusal brings the fields back as they were sent.
  function forget(form) {
    try { sessionStorage.removeItem(TYPED + form.dataset.keepTyped); } catch (error) { /* none */ }
  }
  function keptForm(event) {
    var form = event.detail && event.detail.elt;
    return form && form.matches && form.matches("form[data-keep-typed]") ? form : null;
  }
  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = keptForm(event);
    if (form) forget(form);
  });
  document.addEventListener("htmx:sendError", function (event) {
    var form = keptForm(event);
    if (form && document.body.contains(form)) keep(form);
  });
  document.addEventListener("DOMContentLoaded", putBack);
  document.addEventListener("htmx:afterSettle", putBack);

  // An outbox: a card or a row choice sent while the server cannot be reached (Wi-Fi
  // down) stays on the phone, marked "not sent yet", and goes again by itself as soon as
  // the stream or any request gets through, as a second tap would: the server refuses a
  // card twice and a form of a round that moved on (it says so, and the card stays typed).
  var outbox = null;
  var lastSubmitter = null;
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button");
    if (button && button.form) lastSubmitter = button;
  }, true);
  function notSent(form, button, show) {
    var notice = form.querySelector(".not-sent");
    if (!show) { if (notice) notice.remove(); return; }
    var text = document.getElementById("not-sent-text");
    if (notice || !text) return;
    notice = document.createElement("p");
    notice.className = "not-sent field-error";
    notice.setAttribute("role", "status");
    notice.textContent = text.content.textContent;
    var before = button || form.querySelector("button");
    if (before) before.parentNode.insertBefore(notice, before);
    else form.appendChild(notice);
  }
  document.addEventListener("htmx:sendError", function (event) {
    var form = event.detail && event.detail.elt;
    if (!form || form.tagName !== "FORM" || (form.method || "").toLowerCase() !== "post") return;
    var button = lastSubmitter && lastSubmitter.form === form ? lastSubmitter : null;
    outbox = { form: form, button: button };
    notSent(form, button, true);
  });
  function sendTheOutbox() {
    var waiting = outbox;
    outbox = null;
    if (!waiting || !document.body.contains(waiting.form)) return;
    notSent(waiting.form, waiting.button, false);
    if (waiting.button && document.body.contains(waiting.button)) waiting.button.click();
    else waiting.form.requestSubmit();
  }
  document.addEventListener("htmx:sseOpen", sendTheOutbox);
  window.addEventListener("online", sendTheOutbox);
  document.addEventListener("htmx:afterRequest", function (event) {
    var xhr = event.detail && event.detail.xhr;
    if (xhr && xhr.status > 0 && outbox && event.detail.elt !== outbox.form) sendTheOutbox();
  });

  // The TV and the phones follow a rematch by themselves once its first game starts: the
  // link, pushed into the finished match's page then, is marked data-follow
  // (matches/_rematch.html); a phone keeps its link and its "I am" through it.
  // Only when pushed: the finished match's page, opened afresh, stays its own.
  var followedAtLoad = null;
  function rematchToFollow() {
    var link = document.querySelector("#match a.rematch[data-follow]");
    return link ? link.href : null;
  }
  document.addEventListener("DOMContentLoaded", function () { followedAtLoad = rematchToFollow(); });
  function followRematch() {
    var href = rematchToFollow();
    if (href && href !== followedAtLoad) window.location.assign(href);
  }
  document.addEventListener("htmx:afterSettle", followRematch);
  document.addEventListener("htmx:sseMessage", followRematch);

  // Keep the screen awake while a match is being played (not once it is over, not while
  // the page is hidden). Over HTTPS: the Screen Wake Lock API. At home over plain http
  // (not a secure context) there is none, so a video does it, as the browsers honour one
  // (blink's VideoWakeLock: playing, with frames, on a visible page, more than 75 % in
  // view and either a live stream or over 20 % of the screen; Gecko: a stream or sound).
  // A muted 2x2 px video of a canvas's live stream: no request, no sound, no picture to
  // see, a frame every 10 s. WebKit (iOS) wants sound, which would stop the players'
  // music: there HTTPS is the way (README).
  var wakeLock = null;
  var asking = false;
  var keeper = null;
  function awakeWanted() {
    return document.visibilityState === "visible" && !!document.querySelector("[data-keep-awake]") &&
      !document.getElementById("over-heading");
  }
  function keepAwake() {
    if (!awakeWanted()) { letSleep(); return; }
    if (!("wakeLock" in navigator)) { playKeeper(); return; }
    if (wakeLock || asking) return;
    asking = true;
    navigator.wakeLock.request("screen").then(function (lock) {
      wakeLock = lock;
      lock.addEventListener("release", function () { wakeLock = null; });
    }).catch(function () { /* not allowed here (battery saver): fine */ })
      .then(function () { asking = false; });
  }
  function playKeeper() {
    var canvas = document.createElement("canvas");
    if (keeper || !canvas.captureStream) return;
    canvas.width = canvas.height = 2;
    var stream = canvas.captureStream(0);
    var track = stream.getVideoTracks()[0];
    var video = document.createElement("video");
    video.muted = true;
    video.setAttribute("playsinline", "");
    video.setAttribute("aria-hidden", "true");
    video.setAttribute("data-keep-awake-video", "");
    var style = video.style;
    style.position = "fixed"; style.left = "0"; style.bottom = "0";
    style.width = "2px"; style.height = "2px"; style.opacity = "0.01"; style.pointerEvents = "none";
    video.srcObject = stream;
    document.body.appendChild(video);
    var drawing = canvas.getContext("2d");
    var shade = 0;
    function frame() {
      shade = 1 - shade;
      drawing.fillStyle = shade ? "#000" : "#010101";
      drawing.fillRect(0, 0, 2, 2);
      if (track.requestFrame) track.requestFrame();
    }
    frame();
    keeper = { video: video, track: track, timer: setInterval(frame, 10000) };
    video.play().catch(function () { letSleep(); }); // the next tap or key tries again
  }
  function letSleep() {
    if (wakeLock) { wakeLock.release().catch(function () {}); wakeLock = null; }
    if (!keeper) return;
    clearInterval(keeper.timer);
    keeper.video.pause();
    keeper.track.stop();
    keeper.video.remove();
    keeper = null;
  }
  document.addEventListener("DOMContentLoaded", keepAwake);
  document.addEventListener("pointerdown", keepAwake);
  document.addEventListener("keydown", keepAwake);
  document.addEventListener("htmx:afterSettle", keepAwake);
  document.addEventListener("htmx:sseMessage", keepAwake);
  document.addEventListener("visibilitychange", keepAwake);

  // A game's review, round by round: the arrow keys follow its previous and next links
  // (a keyboard by the TV steps the household through it together).
  document.addEventListener("keydown", function (event) {
    var rel = { ArrowLeft: "prev", ArrowRight: "next" }[event.key];
    var typing = event.target.closest && event.target.closest("input, textarea, select");
    if (!rel || typing || event.altKey || event.ctrlKey || event.metaKey) return;
    var link = document.querySelector('#review-round a[rel="' + rel + '"]');
    if (!link) return;
    event.preventDefault();
    link.click();
  });
})();
