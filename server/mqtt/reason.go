package mqtt

// The MQTT 5 reason codes (section 2.4) a server sends or reads. Codes
// below 0x80 are successes; the others are failures.
const (
	ReasonSuccess                     byte = 0x00 // also Normal disconnection, Granted QoS 0
	ReasonGrantedQoS1                 byte = 0x01
	ReasonGrantedQoS2                 byte = 0x02
	ReasonDisconnectWithWill          byte = 0x04
	ReasonNoMatchingSubscribers       byte = 0x10
	ReasonNoSubscriptionExisted       byte = 0x11
	ReasonContinueAuthentication      byte = 0x18
	ReasonReAuthenticate              byte = 0x19
	ReasonUnspecifiedError            byte = 0x80
	ReasonMalformedPacket             byte = 0x81
	ReasonProtocolError               byte = 0x82
	ReasonImplementationSpecific      byte = 0x83
	ReasonUnsupportedProtocolVersion  byte = 0x84
	ReasonClientIDNotValid            byte = 0x85
	ReasonBadUserNameOrPassword       byte = 0x86
	ReasonNotAuthorized               byte = 0x87
	ReasonServerUnavailable           byte = 0x88
	ReasonServerBusy                  byte = 0x89
	ReasonBanned                      byte = 0x8A
	ReasonServerShuttingDown          byte = 0x8B
	ReasonBadAuthenticationMethod     byte = 0x8C
	ReasonKeepAliveTimeout            byte = 0x8D
	ReasonSessionTakenOver            byte = 0x8E
	ReasonTopicFilterInvalid          byte = 0x8F
	ReasonTopicNameInvalid            byte = 0x90
	ReasonPacketIDInUse               byte = 0x91
	ReasonPacketIDNotFound            byte = 0x92
	ReasonReceiveMaximumExceeded      byte = 0x93
	ReasonTopicAliasInvalid           byte = 0x94
	ReasonPacketTooLarge              byte = 0x95
	ReasonMessageRateTooHigh          byte = 0x96
	ReasonQuotaExceeded               byte = 0x97
	ReasonAdministrativeAction        byte = 0x98
	ReasonPayloadFormatInvalid        byte = 0x99
	ReasonRetainNotSupported          byte = 0x9A
	ReasonQoSNotSupported             byte = 0x9B
	ReasonUseAnotherServer            byte = 0x9C
	ReasonServerMoved                 byte = 0x9D
	ReasonSharedSubsNotSupported      byte = 0x9E
	ReasonConnectionRateExceeded      byte = 0x9F
	ReasonMaximumConnectTime          byte = 0xA0
	ReasonSubscriptionIDsNotSupported byte = 0xA1
	ReasonWildcardSubsNotSupported    byte = 0xA2
)

// validReasons holds, per packet, the reason codes a peer may send in it
// (section 2.4's table); anything else is a malformed packet.
var validReasons = map[PacketType][]byte{
	PUBACK: {ReasonSuccess, ReasonNoMatchingSubscribers, ReasonUnspecifiedError, ReasonImplementationSpecific,
		ReasonNotAuthorized, ReasonTopicNameInvalid, ReasonPacketIDInUse, ReasonQuotaExceeded, ReasonPayloadFormatInvalid},
	PUBREC: {ReasonSuccess, ReasonNoMatchingSubscribers, ReasonUnspecifiedError, ReasonImplementationSpecific,
		ReasonNotAuthorized, ReasonTopicNameInvalid, ReasonPacketIDInUse, ReasonQuotaExceeded, ReasonPayloadFormatInvalid},
	PUBREL:  {ReasonSuccess, ReasonPacketIDNotFound},
	PUBCOMP: {ReasonSuccess, ReasonPacketIDNotFound},
	DISCONNECT: {ReasonSuccess, ReasonDisconnectWithWill, ReasonUnspecifiedError, ReasonMalformedPacket,
		ReasonProtocolError, ReasonImplementationSpecific, ReasonNotAuthorized, ReasonServerBusy,
		ReasonServerShuttingDown, ReasonKeepAliveTimeout, ReasonSessionTakenOver, ReasonTopicFilterInvalid,
		ReasonTopicNameInvalid, ReasonReceiveMaximumExceeded, ReasonTopicAliasInvalid, ReasonPacketTooLarge,
		ReasonMessageRateTooHigh, ReasonQuotaExceeded, ReasonAdministrativeAction, ReasonPayloadFormatInvalid,
		ReasonRetainNotSupported, ReasonQoSNotSupported, ReasonUseAnotherServer, ReasonServerMoved,
		ReasonSharedSubsNotSupported, ReasonConnectionRateExceeded, ReasonMaximumConnectTime,
		ReasonSubscriptionIDsNotSupported, ReasonWildcardSubsNotSupported},
	AUTH: {ReasonSuccess, ReasonContinueAuthentication, ReasonReAuthenticate},
}

func validReason(t PacketType, code byte) bool {
	for _, c := range validReasons[t] {
		if c == code {
			return true
		}
	}
	return false
}
