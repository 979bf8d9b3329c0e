import { Injectable, Module } from '@nestjs/common';
import { Logger, LoggerModule } from 'nestjs-pino';
import pino from 'pino';
import pretty from 'pino-pretty';
import { RequestContext } from '../common/request-context.js';
import { ConfigService, type LogFormat, type LogLevel } from '../config/config.service.js';

/** LOG_LEVEL speaks Nest's level names; pino has its own. */
const PINO_LEVEL: Record<LogLevel, pino.Level> = {
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

/** Nest's start-up narration: a line per module, controller and route (about 100 before the URL a newcomer needs). */
const START_UP_NARRATION = new Set([
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestFactory',
  'NestApplication',
]);

/**
 * The application logger (nestjs-pino): every `new Logger(X.name)` in the code writes through it. Nest's start-up
 * narration moves from `log` to `debug` (LOG_LEVEL=debug shows it): at the default level a start prints what an
 * operator acts on, ending with the URL.
 */
@Injectable()
export class AppLogger extends Logger {
  override log(message: unknown, ...optionalParams: unknown[]): void {
    const context = optionalParams.at(-1);
    if (typeof context === 'string' && START_UP_NARRATION.has(context)) {
      this.debug(message, context);
      return;
    }
    super.log(message, ...optionalParams);
  }
}

function destination(format: LogFormat): pino.DestinationStream {
  // Synchronous writes: the last lines before a crash or a SIGTERM exit are not lost in a worker thread's buffer.
  return format === 'pretty'
    ? pretty({
        sync: true,
        colorize: true,
        translateTime: 'SYS:HH:MM:ss.l',
        messageFormat: '{if context}[{context}] {end}{if requestId}({requestId}) {end}{msg}',
        ignore: 'pid,hostname,context,requestId',
      })
    : pino.destination({ dest: 1, sync: true });
}

/**
 * Structured logs: one JSON object per line (LOG_FORMAT=json, the default) or pretty text (LOG_FORMAT=pretty, the
 * demo). A line written while a request is handled carries its `requestId`; a line written while a job runs carries
 * `jobId` and the `requestId` of the request that queued it (both from RequestContext, src/common/request-context.ts).
 * Requests are logged on completion at debug level: method, URL, status and duration only (never headers: tokens).
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        pinoHttp: [
          {
            level: PINO_LEVEL[config.logLevel],
            // Request lines get their id from RequestContext like every other line (set in an onRequest hook,
            // src/common/http-setup.ts), so pino-http adds nothing of its own.
            autoLogging: false,
            quietReqLogger: true,
            mixin: () => {
              const context = RequestContext.current();
              if (!context) {
                return {};
              }
              return context.jobId
                ? { requestId: context.requestId, jobId: context.jobId }
                : { requestId: context.requestId };
            },
          },
          destination(config.logFormat),
        ],
      }),
    }),
  ],
  providers: [AppLogger],
  exports: [AppLogger],
})
export class LoggingModule {}
