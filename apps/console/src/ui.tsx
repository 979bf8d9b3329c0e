import { createContext, type ReactNode, useCallback, useContext, useState } from 'react';

export function ago(iso: string | null | undefined): string {
  if (!iso) {
    return 'never';
  }
  const s = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (s < 60) {
    return `${Math.max(s, 0)} s ago`;
  }
  if (s < 3600) {
    return `${Math.round(s / 60)} min ago`;
  }
  if (s < 86400) {
    return `${Math.round(s / 3600)} h ago`;
  }
  return `${Math.round(s / 86400)} d ago`;
}

export function StateBadge({ state }: { state: string }) {
  return <span className={`badge state-${state}`}>{state.replace('_', ' ')}</span>;
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) {
    return null;
  }
  return (
    <div className="error" role="alert">
      {error instanceof Error ? error.message : String(error)}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

interface Toast {
  id: number;
  text: string;
  kind: 'ok' | 'error';
}

const ToastContext = createContext<(text: string, kind?: Toast['kind']) => void>(() => undefined);

export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const push = useCallback((text: string, kind: Toast['kind'] = 'ok') => {
    const id = Date.now() + Math.random();
    setToasts((t) => [...t, { id, text, kind }]);
    setTimeout(() => setToasts((t) => t.filter((x) => x.id !== id)), kind === 'error' ? 10000 : 4000);
  }, []);
  return (
    <ToastContext.Provider value={push}>
      {children}
      <div className="toasts" aria-live="polite">
        {toasts.map((t) => (
          <div key={t.id} className={`toast toast-${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'}>
            {t.text}
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

export const useToast = () => useContext(ToastContext);

/** A confirmation that names what the action will touch; the action runs only after "Confirm". */
export function Confirm({
  title,
  children,
  confirmLabel,
  danger,
  onConfirm,
  onCancel,
}: {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <div className="modal-backdrop">
      <div className="modal" role="dialog" aria-modal="true" aria-label={title}>
        <h2>{title}</h2>
        <div className="modal-body">{children}</div>
        <div className="modal-actions">
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
          <button type="button" className={danger ? 'danger' : 'primary'} autoFocus onClick={onConfirm}>
            {confirmLabel}
          </button>
        </div>
      </div>
    </div>
  );
}

/** A confirmation before deleting `what`; `children` say what the deletion changes. */
export function ConfirmDelete({
  what,
  children,
  onConfirm,
  onCancel,
}: {
  what: string;
  children: ReactNode;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <Confirm title={`Delete ${what}?`} confirmLabel="Delete" danger onCancel={onCancel} onConfirm={onConfirm}>
      {children}
    </Confirm>
  );
}

/** A row's Edit and Delete buttons, after any buttons of its own (`children`). */
export function RowActions({
  children,
  onEdit,
  onDelete,
}: {
  children?: ReactNode;
  onEdit: () => void;
  onDelete: () => void;
}) {
  return (
    <td className="actions">
      {children}
      {children ? ' ' : null}
      <button type="button" onClick={onEdit}>
        Edit
      </button>{' '}
      <button type="button" className="danger" onClick={onDelete}>
        Delete
      </button>
    </td>
  );
}

/** The end of an edit form: its Enabled box, the error of the last save, then Save (or Create) and Cancel. */
export function FormFooter({
  enabled,
  onEnabled,
  error,
  pending,
  submitLabel,
  onCancel,
}: {
  enabled: boolean;
  onEnabled: (enabled: boolean) => void;
  error: unknown;
  pending: boolean;
  submitLabel: string;
  onCancel: () => void;
}) {
  return (
    <>
      <label className="check">
        <input type="checkbox" checked={enabled} onChange={(e) => onEnabled(e.target.checked)} /> Enabled
      </label>
      <div className="span-2">
        <ErrorBox error={error} />
        <button type="submit" className="primary" disabled={pending}>
          {submitLabel}
        </button>{' '}
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}
