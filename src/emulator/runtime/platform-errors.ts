/**
 * The platform's error classes, as source evaluated inside each compartment so that user code's
 * `instanceof` and `extends` work on them. Their status tells the emulator how to answer.
 */
export const USER_ERRORS_SOURCE = `(() => {
  class ReactorError extends Error {
    constructor(message) {
      super(message);
      Object.defineProperty(this, 'name', { value: new.target.name, enumerable: false, configurable: true, writable: true });
    }
  }
  const withStatus = (name, status, fallback) => {
    const C = { [name]: class extends ReactorError {
      constructor(message = fallback) { super(message); }
      get status() { return status; }
    } }[name];
    return C;
  };
  const AuthenticationError = withStatus('AuthenticationError', 401, 'Authentication failed');
  const AuthorizationError = withStatus('AuthorizationError', 403, 'Forbidden');
  const BadRequestError = withStatus('BadRequestError', 400, 'Bad request');
  const InvalidPaymentMethodError = withStatus('InvalidPaymentMethodError', 402, 'Invalid payment method');
  const RateLimitError = withStatus('RateLimitError', 429, 'Rate limit exceeded');
  class CustomHttpResponseError extends Error {
    constructor({ status = 500, headers = {}, body } = {}) {
      super('Custom HTTP response (' + status + ')');
      Object.defineProperty(this, 'name', { value: 'CustomHttpResponseError', enumerable: false, configurable: true, writable: true });
      this.status = status;
      this.headers = headers;
      this.body = body;
    }
  }
  return harden({ AuthenticationError, AuthorizationError, BadRequestError, InvalidPaymentMethodError, RateLimitError, CustomHttpResponseError });
})()`;

export const USER_ERROR_STATUS: Record<string, number> = {
  AuthenticationError: 401,
  AuthorizationError: 403,
  BadRequestError: 400,
  InvalidPaymentMethodError: 402,
  RateLimitError: 429,
};
