export * from './board-client.js';
export * from './detect.js';
export * from './dialects.js';
export * from './errors.js';
export {
  CERT_PIN_MISMATCH,
  createBoardDispatcher,
  type CertificatePins,
  type DispatcherOptions,
  type WireResponse,
} from './transport.js';
