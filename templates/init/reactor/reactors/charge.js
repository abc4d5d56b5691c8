/**
 * A reactor: code the platform runs on demand (`svc invoke reactor charge`, or
 * POST /reactors/{id}/react). It gets `req.args` with every `{{ token }}` expression already
 * replaced by the token's data, `req.configuration` (svc.yaml), and `req.svc`, a client of the
 * platform with the permissions of the reactor's Application. It returns `raw` (sent back as it is)
 * and `tokenize` (stored as tokens; the caller gets their ids, never the data). Throw one of the
 * platform's errors (BadRequestError: 400, ...) to answer with that status.
 *
 * Save this file while `svc serve` runs with svc.yaml and the new code serves the next call.
 */
module.exports = async function (req) {
  const { card, amount } = req.args;
  if (!Number.isInteger(amount) || amount <= 0) {
    throw new BadRequestError('amount must be a whole number of cents above 0');
  }
  if (!card || typeof card.number !== 'string') {
    throw new BadRequestError('card must be a card token: {"card": "{{ <token id> }}"}');
  }
  const currency = req.configuration.CURRENCY || 'EUR';
  return {
    raw: { status: 'authorized', amount, currency, card_last4: card.number.slice(-4) },
    // Each value here is stored as a token: the caller gets {"receipt": "<token id>"}.
    tokenize: { receipt: `charged ${amount} ${currency} to the card ending ${card.number.slice(-4)}` },
  };
};
