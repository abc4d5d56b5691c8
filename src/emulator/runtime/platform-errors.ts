/**
 * The platform's error package (`@svc/errors`, the vendor's reactor-formulas SDK renamed), as source
 * evaluated inside each compartment so that user code's `instanceof` and `extends` work on them.
 *
 * As the vendor's classes do: each reactor error's message is its class's fixed text ("Bad
 * Request"), its `status` the class's, and its `errors` what the constructor was given, made a map
 * of string lists (`'msg'` -> `{error: ['msg']}`, an array -> `{error: [...]}`, an object -> one
 * list per key, an Error -> its message). The answer's problem carries `detail` (the fixed text)
 * and `errors`. CustomHttpResponseError takes `{status, headers, body}` (status an integer 100-599,
 * else its constructor throws) and answers exactly that. `SvcApiError` is what `req.svc` rejects
 * with (the vendor JS client's BasisTheoryApiError renamed): `status` and the problem as `data`.
 * The vendor's own names of the two renamed classes are kept as aliases, so code written for the
 * platform requires them unchanged.
 */
export const USER_ERRORS_SOURCE = `(() => {
  const FALLBACK = 'Something went wrong. Please try again.';
  const named = (error, name) =>
    Object.defineProperty(error, 'name', { value: name, enumerable: false, configurable: true, writable: true });
  const stringify = (value) => {
    const seen = new WeakSet();
    return JSON.stringify(value, (key, item) => {
      if (typeof item === 'object' && item !== null) {
        if (seen.has(item)) return '[Circular]';
        seen.add(item);
      }
      return item;
    });
  };
  const listOf = (items) =>
    items.map((item) => (typeof item === 'object' ? stringify(item) : item == null ? FALLBACK : String(item)));
  const errorsOf = (given) => {
    try {
      if (Array.isArray(given)) return { error: listOf(given) };
      if (given instanceof Error)
        return { error: [given.message ? String(given.message) : given.name !== 'Error' ? String(given.name) : FALLBACK] };
      if (typeof given === 'object') {
        const errors = {};
        for (const key in given) {
          const item = given[key];
          errors[key] = Array.isArray(item)
            ? listOf(item)
            : [typeof item === 'object' ? stringify(item) : item ? String(item) : FALLBACK];
        }
        return errors;
      }
      if (typeof given === 'string') return { error: [given] };
      return { error: [given ? String(given) : FALLBACK] };
    } catch {
      return { error: [FALLBACK] };
    }
  };
  class SvcReactorError extends Error {
    constructor({ message, status, errors } = {}) {
      super(message);
      named(this, new.target.name);
      this.status = status;
      this.errors = errorsOf(errors);
    }
    toRFC7807() {
      return { detail: this.message, status: this.status, errors: this.errors };
    }
  }
  const reactorError = (name, status, text) =>
    ({ [name]: class extends SvcReactorError {
      constructor(errors) { super({ message: text, status, errors }); }
    } })[name];
  class CustomHttpResponseError extends Error {
    constructor({ status, headers, body } = {}) {
      super();
      named(this, 'CustomHttpResponseError');
      const parsed = Number.parseInt(status);
      if (parsed !== status || parsed < 100 || parsed > 599) throw new Error('status is not a valid integer');
      this.status = parsed;
      this.headers = headers ?? {};
      this.body = body ?? {};
    }
    toResponseBody() {
      return { status: this.status, headers: this.headers, body: this.body };
    }
  }
  class SvcApiError extends Error {
    constructor(message, status, data) {
      super(message);
      named(this, 'SvcApiError');
      this.status = status;
      this.data = data;
    }
  }
  return harden({
    SvcReactorError,
    BasisTheoryReactorError: SvcReactorError,
    AuthenticationError: reactorError('AuthenticationError', 401, 'Authentication Failed'),
    AuthorizationError: reactorError('AuthorizationError', 403, 'Forbidden'),
    BadRequestError: reactorError('BadRequestError', 400, 'Bad Request'),
    InvalidPaymentMethodError: reactorError('InvalidPaymentMethodError', 402, 'Invalid Payment Method'),
    InvalidReactorConfigurationError: reactorError('InvalidReactorConfigurationError', 400, 'Invalid Reactor Configuration'),
    RateLimitError: reactorError('RateLimitError', 429, 'Rate Limit Exceeded'),
    ReactorRuntimeError: reactorError('ReactorRuntimeError', 500, 'Reactor Runtime Error'),
    ServiceUnavailableError: reactorError('ServiceUnavailableError', 503, 'Service Unavailable'),
    CustomHttpResponseError,
    SvcApiError,
    BasisTheoryApiError: SvcApiError,
  });
})()`;

/** The base class of the reactor errors: a thrown instance answers with its status, `detail` and `errors`. */
export const REACTOR_ERROR_BASE = 'SvcReactorError';

/** What `req.svc` rejects with. */
export const API_ERROR_CLASS = 'SvcApiError';

/** The statuses a reactor error may answer with (the base class takes any): an error's 4xx or 5xx. */
export function isErrorStatus(status: unknown): status is number {
  return Number.isInteger(status) && (status as number) >= 400 && (status as number) <= 599;
}
