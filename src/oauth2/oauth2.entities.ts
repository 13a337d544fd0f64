import { Entity, Index } from 'typeorm';
import { FlagColumn, IdColumn, LongTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/**
 * An OAuth2 application a user registered (a CI server such as Woodpecker or Drone). The client secret is
 * stored only as a salted PBKDF2 hash: it is shown once, when made.
 */
@Entity('oauth2_application')
@Index('IDX_oauth2_application_uid', ['uid'])
@Index('UQE_oauth2_application_client_id', ['clientId'], { unique: true })
export class OAuth2ApplicationEntity {
  @IdColumn()
  id: number;

  /** The owner. */
  @RefColumn()
  uid: number;

  @TextColumn(255)
  name: string;

  @TextColumn(64)
  clientId: string;

  @TextColumn(255)
  clientSecretHash: string;

  @TextColumn(64)
  clientSecretSalt: string;

  /** The redirect URIs as a JSON array, each matched exactly. */
  @LongTextColumn()
  redirectUris: string;

  @FlagColumn(false)
  confidentialClient: boolean;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;
}

/**
 * What the OpenID provider keeps between requests (grants, authorization codes, access and refresh tokens,
 * sign-in sessions and interactions), shared by every instance on the database. A row is found by the
 * SHA-256 of its id, because the id of a code or token is the bearer secret itself; the payload never holds it.
 */
@Entity('oauth2_record')
@Index('IDX_oauth2_record_grant_id', ['grantId'])
@Index('IDX_oauth2_record_client_id', ['clientId'])
@Index('IDX_oauth2_record_uid', ['uid'])
@Index('IDX_oauth2_record_expires_unix', ['expiresUnix'])
export class OAuth2RecordEntity {
  /** The provider's model name: AccessToken, RefreshToken, AuthorizationCode, Grant, Session, Interaction. */
  @TextColumn(32, { primary: true })
  kind: string;

  @TextColumn(64, { primary: true })
  idHash: string;

  /** The provider's payload as JSON, without the id. */
  @LongTextColumn()
  payload: string;

  @TextColumn(64)
  grantId: string;

  @TextColumn(64)
  clientId: string;

  /** The signed-in account (a user id), 0 when none. */
  @RefColumn({ default: 0 })
  accountId: number;

  /** A session's uid, '' for other kinds. */
  @TextColumn(64)
  uid: string;

  @UnixTimeColumn()
  expiresUnix: number;

  @UnixTimeColumn()
  consumedUnix: number;
}

/** The provider's signing key (an RS256 JWK), sealed with SECRET_KEY; one row, made by the first instance. */
@Entity('oauth2_signing_key')
export class OAuth2SigningKeyEntity {
  @RefColumn({ primary: true })
  id: number;

  @LongTextColumn()
  sealedJwk: string;

  @UnixTimeColumn()
  createdUnix: number;
}
