import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs, one line per event. The processes pass their --log-level; without one, MCS_LOG_LEVEL, then the
 * deprecated LOG_LEVEL (read until 0.3.0; the processes' option parsing warns about it), then info.
 */
export function createLogger(
  component: string,
  level = process.env.MCS_LOG_LEVEL ?? process.env.LOG_LEVEL ?? 'info',
): Logger {
  return pino({
    level,
    base: { component },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}
