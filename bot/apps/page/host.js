// The host side of MCP Apps' bridge (io.modelcontextprotocol/ui), written
// for mcpgram: the app's page runs in a sandboxed frame of another origin
// (an opaque one, or its server's own at APPS_ORIGIN) and speaks JSON-RPC
// over postMessage; this page answers it,
// passing what only the server can do to mcpgram's endpoint with the
// init data Telegram signed for the user. The frame never sees the init
// data, this page's DOM, or mcpgram's endpoints.
'use strict';
(function () {
  var tg = window.Telegram && window.Telegram.WebApp;
  var fragment = new URLSearchParams(location.hash.slice(1));
  var initData = (tg && tg.initData) || fragment.get('tgWebAppData') || '';
  try { history.replaceState(null, '', location.pathname); } catch (e) { /* keep going */ }
  var token = location.pathname.split('/')[2] || '';
  var endpoint = '/apps/' + encodeURIComponent(token) + '/rpc';
  var status = document.getElementById('status');
  var frame = document.getElementById('app');
  var linkBox = document.getElementById('link');
  var opened = null;
  var initialized = false;
  var loads = 0; // of the app's page in the frame
  var left = false; // the frame left the app's page: the bridge is closed
  var displayMode = 'inline';
  var appModes = null; // the display modes the app declared, if it did
  var pendingMode = null; // the app's ui/request-display-mode Telegram has yet to answer
  var inlineHeight = 0; // the frame's height inline, as the app last asked

  function theme() {
    if (tg && tg.colorScheme) { return tg.colorScheme; }
    return window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
  }

  // themeVariables are the MCP Apps style variables Telegram's theme
  // parameters give, by the parameters' names.
  var themeVariables = {
    bg_color: '--color-background-primary', secondary_bg_color: '--color-background-secondary',
    text_color: '--color-text-primary', hint_color: '--color-text-secondary', link_color: '--color-text-info',
    destructive_text_color: '--color-text-danger', section_separator_color: '--color-border-primary'
  };

  // themeStyles maps Telegram's theme (its themeParams, else the URL
  // fragment's tgWebAppThemeParams) to style variables: colours of the
  // form #rrggbb only, as the fragment is anyone's to write.
  function themeStyles() {
    var params = tg && tg.themeParams;
    if (!params) {
      try { params = JSON.parse(fragment.get('tgWebAppThemeParams') || 'null'); } catch (e) { params = null; }
    }
    var vars = {};
    if (!params || typeof params !== 'object') { return vars; }
    Object.keys(themeVariables).forEach(function (k) {
      var v = params[k];
      if (typeof v === 'string' && /^#[0-9a-fA-F]{6}$/.test(v)) { vars[themeVariables[k]] = v; }
    });
    return vars;
  }

  // ask sends one request to mcpgram, with the init data.
  function ask(method, params) {
    return fetch(endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ initData: initData, id: 1, method: method, params: params || {} })
    }).then(function (r) {
      if (!r.ok) { return r.text().then(function (t) { throw new Error(t.trim()); }); }
      return r.json();
    });
  }

  // post sends the frame a message: to its origin where it has one of
  // its own, else to the opaque origin, which has no name.
  function post(message) { if (!left) { frame.contentWindow.postMessage(message, opened.origin || '*'); } }

  // The frame's first load is the app's page; another is the frame gone
  // elsewhere (a link followed, a script's navigation), whose page is
  // not the app's and may be anyone's, so the bridge closes: nothing more
  // is posted or answered, and the frame is emptied.
  frame.addEventListener('load', function () {
    if (!opened || left || ++loads < 2) { return; }
    left = true;
    frame.hidden = true;
    frame.src = 'about:blank';
    linkBox.hidden = true;
    status.textContent = 'The app left its page. Open it again from its button in the chat.';
  });
  function notify(method, params) { post({ jsonrpc: '2.0', method: method, params: params }); }
  function reply(id, result) { post({ jsonrpc: '2.0', id: id, result: result }); }
  function fail(id, code, message) { post({ jsonrpc: '2.0', id: id, error: { code: code, message: message } }); }

  // Telegram's Mini App events, spoken raw: this page loads none of
  // Telegram's scripts. postTelegram sends one the ways Telegram's
  // clients take them (mobile, desktop, web), and says whether one was
  // there to take it.
  function postTelegram(type) {
    var proxy = window.TelegramWebviewProxy;
    if (proxy && typeof proxy.postEvent === 'function') { proxy.postEvent(type, '{}'); return true; }
    if (window.external && typeof window.external.notify === 'function') {
      window.external.notify(JSON.stringify({ eventType: type, eventData: {} }));
      return true;
    }
    if (window.parent !== window) {
      window.parent.postMessage(JSON.stringify({ eventType: type, eventData: {} }), 'https://web.telegram.org');
      return true;
    }
    return false;
  }

  // canFullscreen: Telegram's version (8.0 and later) has fullscreen
  // Mini Apps, and a client is there to ask.
  function canFullscreen() {
    var v = String(fragment.get('tgWebAppVersion') || '0').split('.');
    return Number(v[0]) >= 8 && (!!window.TelegramWebviewProxy || window.parent !== window ||
      !!(window.external && typeof window.external.notify === 'function'));
  }

  function availableModes() { return canFullscreen() ? ['inline', 'fullscreen'] : ['inline']; }

  // requestMode answers the app's ui/request-display-mode: a mode both
  // the host and the app have is asked of Telegram, and the app told the
  // mode it got; any other request gets the current mode.
  function requestMode(m) {
    var want = m.params && m.params.mode;
    var ok = availableModes().indexOf(want) >= 0 && (!appModes || appModes.indexOf(want) >= 0);
    if (!ok || want === displayMode || pendingMode) { reply(m.id, { mode: displayMode }); return; }
    if (!postTelegram(want === 'fullscreen' ? 'web_app_request_fullscreen' : 'web_app_exit_fullscreen')) {
      reply(m.id, { mode: displayMode });
      return;
    }
    pendingMode = { id: m.id, timer: setTimeout(function () { settleMode(displayMode); }, 3000) };
  }

  // settleMode takes mode as the current one, tells the app, and answers
  // its request waiting for it.
  function settleMode(mode) {
    var changed = mode !== displayMode;
    displayMode = mode;
    frame.style.height = mode === 'fullscreen' ? window.innerHeight + 'px' : (inlineHeight ? inlineHeight + 'px' : '');
    if (changed && initialized) {
      notify('ui/notifications/host-context-changed', { displayMode: mode, containerDimensions: dimensions() });
    }
    if (pendingMode) { clearTimeout(pendingMode.timer); reply(pendingMode.id, { mode: mode }); pendingMode = null; }
  }

  // telegramEvent takes an event of Telegram's: only fullscreen's.
  function telegramEvent(type, data) {
    if (type === 'fullscreen_changed') { settleMode(data && data.is_fullscreen === true ? 'fullscreen' : 'inline'); }
    if (type === 'fullscreen_failed') { settleMode(data && data.error === 'ALREADY_FULLSCREEN' ? 'fullscreen' : displayMode); }
  }
  window.Telegram = window.Telegram || {};
  window.Telegram.WebView = window.Telegram.WebView || { receiveEvent: telegramEvent };

  // dimensions are the frame's: its width, and its height fixed in
  // fullscreen, else the app's up to the window's.
  function dimensions() {
    if (displayMode === 'fullscreen') { return { width: frame.clientWidth, height: window.innerHeight }; }
    return { width: frame.clientWidth, maxHeight: window.innerHeight };
  }

  function hostContext() {
    return {
      theme: theme(),
      styles: { variables: themeStyles() },
      displayMode: displayMode,
      availableDisplayModes: availableModes(),
      locale: opened.locale || navigator.language,
      platform: tg ? 'mobile' : 'web',
      containerDimensions: dimensions()
    };
  }

  // openLink shows the link's real target, and opens it only when the
  // user presses to.
  function openLink(m) {
    var u = null;
    try { u = new URL(String((m.params && m.params.url) || '')); } catch (e) { u = null; }
    if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:')) { reply(m.id, { isError: true }); return; }
    linkBox.textContent = '';
    var p = document.createElement('p');
    p.textContent = 'The app asks to open ' + u.href;
    var go = document.createElement('button');
    go.textContent = 'Open ' + u.host;
    go.onclick = function () {
      linkBox.hidden = true;
      if (tg && tg.openLink) { tg.openLink(u.href); } else { window.open(u.href, '_blank', 'noopener,noreferrer'); }
    };
    var no = document.createElement('button');
    no.textContent = 'Cancel';
    no.onclick = function () { linkBox.hidden = true; };
    linkBox.append(p, go, no);
    linkBox.hidden = false;
    reply(m.id, {});
  }

  // answer passes mcpgram's answer to the app's request m on; a request
  // waiting for the user's approval in the chat is asked after again.
  function answer(m, r) {
    if (left) { return; }
    if (typeof r.await === 'number') {
      status.textContent = 'Waiting for your approval in the chat…';
      ask('mcpgram/await', { pending: r.await }).then(function (next) { answer(m, next); }, function (e) {
        status.textContent = opened.title;
        fail(m.id, -32603, String(e.message).slice(0, 200));
      });
      return;
    }
    status.textContent = opened.title;
    if (r.error) { fail(m.id, r.error.code, r.error.message); } else { reply(m.id, r.result); }
  }

  function forward(m) {
    ask(m.method, m.params).then(function (r) { answer(m, r); },
      function (e) { fail(m.id, -32603, String(e.message).slice(0, 200)); });
  }

  function handle(m) {
    switch (m.method) {
      case 'ui/initialize':
        var declared = m.params && m.params.appCapabilities && m.params.appCapabilities.availableDisplayModes;
        appModes = Array.isArray(declared) ? declared : null;
        reply(m.id, {
          protocolVersion: '2026-01-26',
          hostInfo: opened.hostInfo,
          hostCapabilities: {
            openLinks: {}, serverTools: {}, serverResources: {}, message: { text: {} },
            updateModelContext: { text: {}, structuredContent: {} }, sandbox: opened.hostSandbox || {}
          },
          hostContext: hostContext()
        });
        return;
      case 'ui/notifications/initialized':
        if (!initialized) {
          initialized = true;
          notify('ui/notifications/tool-input', { arguments: opened.input });
          notify('ui/notifications/tool-result', opened.result);
        }
        return;
      case 'ui/notifications/size-changed':
        var h = Number(m.params && m.params.height);
        if (h > 0 && h < 20000) {
          inlineHeight = Math.ceil(h);
          if (displayMode === 'inline') { frame.style.height = inlineHeight + 'px'; }
        }
        return;
      case 'ui/open-link': openLink(m); return;
      case 'ui/request-display-mode': requestMode(m); return;
      case 'ping': reply(m.id, {}); return;
      case 'tools/call': case 'resources/read': case 'ui/message': case 'ui/update-model-context': forward(m); return;
    }
    if (m.id !== undefined && m.id !== null) {
      fail(m.id, -32601, 'mcpgram does not support ' + String(m.method).slice(0, 64) + ' yet');
    }
  }

  window.addEventListener('message', function (ev) {
    if (ev.source === window.parent && window.parent !== window && ev.origin === 'https://web.telegram.org' && typeof ev.data === 'string') {
      var e = null;
      try { e = JSON.parse(ev.data); } catch (err) { e = null; }
      if (e && typeof e.eventType === 'string') { telegramEvent(e.eventType, e.eventData); }
      return;
    }
    if (!opened || left || ev.source !== frame.contentWindow || (opened.origin && ev.origin !== opened.origin)) { return; }
    var m = ev.data;
    if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0' || typeof m.method !== 'string') { return; }
    handle(m);
  });

  ask('mcpgram/open', {}).then(function (r) {
    if (r.error) { throw new Error(r.error.message); }
    opened = r.result;
    document.title = opened.title;
    status.textContent = opened.title;
    frame.hidden = false;
    frame.setAttribute('sandbox', opened.sandbox || 'allow-scripts');
    if (opened.allow) { frame.setAttribute('allow', opened.allow); }
    if (opened.border) { frame.className = 'bordered'; }
    frame.src = opened.frame;
    if (tg) { tg.ready(); if (tg.expand) { tg.expand(); } }
  }).catch(function (e) {
    status.textContent = (e && e.message) || 'This view could not be opened.';
  });
})();
