// Loaded by `rehearse` with `node --require` before Portkey's gateway: every TCP server of the
// process is bound to 127.0.0.1. Portkey's `serve({ fetch, port })` passes no host, so Node
// would listen on every interface; here a listen by port (or by options without a host or a
// path) gets `host: "127.0.0.1"`, whatever it asked for. A listen on a path (a Unix socket) is
// left as it is.
'use strict';
const net = require('net');
const HOST = '127.0.0.1';
const original = net.Server.prototype.listen;
net.Server.prototype.listen = function rehearseLoopbackListen(...args) {
  const cb = args.find((a) => typeof a === 'function');
  const first = args[0];
  let options = null;
  if (args.length === 0 || typeof first === 'function') {
    options = { port: 0 };
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    options = { port: Number(first) };
  } else if (first !== null && typeof first === 'object' && !Array.isArray(first)
             && first.path === undefined && first.handle === undefined && first.fd === undefined) {
    options = Object.assign({}, first);
  }
  if (options === null) {
    return original.apply(this, args);
  }
  options.host = HOST;
  delete options.ipv6Only;
  return cb ? original.call(this, options, cb) : original.call(this, options);
};
