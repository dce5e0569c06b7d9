(function () {
  "use strict";
  // Each event goes to the page that embeds the widget and to the one that opened it
  // (docs/sandbox.md#events). postMessage only queues the message, so an event posted just
  // before a form is sent is still delivered.
  // stringify=true: the events go as JSON text, as the service documents for that parameter.
  var stringify = document.getElementById("widget").getAttribute("data-stringify") === "true";
  function post(event) {
    var data = stringify ? JSON.stringify(event) : event;
    try { window.parent.postMessage(data, "*"); } catch (e) { /* no parent to tell */ }
    try { if (window.opener) { window.opener.postMessage(data, "*"); } } catch (e) { /* closed */ }
  }
  function eventOf(element) {
    var raw = element && element.getAttribute("data-event");
    return raw ? JSON.parse(raw) : null;
  }
  var loaded = document.getElementById("widget-events");
  JSON.parse(loaded ? loaded.textContent : "[]").forEach(post);
  // One form per page is sent, once: a second click while the first is on its way would find the
  // flow busy and show an error page in place of the next page.
  var sending = false;
  Array.prototype.forEach.call(document.querySelectorAll("form"), function (form) {
    form.addEventListener("submit", function (submit) {
      if (sending) { submit.preventDefault(); return; }
      sending = true;
      var data = eventOf(submit.submitter) || eventOf(form);
      if (!data) { return; }
      if (form.id === "account-form") {
        var ids = Array.prototype.map.call(form.querySelectorAll("input[name=account]:checked"), function (input) {
          return input.value;
        });
        data.accountId = ids.length === 1 ? ids[0] : ids;
      }
      post(data);
    });
  });
  var close = document.getElementById("widget-close");
  if (close) { close.addEventListener("click", function () { post(eventOf(close)); }); }
  var search = document.getElementById("institution-search");
  if (search) {
    search.addEventListener("input", function () {
      var wanted = search.value.trim().toLowerCase();
      Array.prototype.forEach.call(document.querySelectorAll("#institution-list li"), function (item) {
        item.hidden = wanted !== "" && item.textContent.toLowerCase().indexOf(wanted) < 0;
      });
    });
  }
  var link = document.getElementById("redirect-link");
  if (link) {
    var url = link.getAttribute("data-navigate");
    if (link.getAttribute("data-top") === "true") {
      // The top window; a browser that refuses a frame this navigation leaves the link to click.
      try { window.top.location.href = url; } catch (e) { /* the link stays */ }
    } else {
      // This frame (innerRedirect, or the result page without a redirectUrl): once the events
      // posted on load have reached listeners in this window too, which a navigation would drop.
      setTimeout(function () { window.location.href = url; }, 100);
    }
  }
})();
