import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs, one line per event; level from LOG_LEVEL (default info). */
export function createLogger(component: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: { component },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}
